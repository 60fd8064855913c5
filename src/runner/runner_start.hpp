// The first steps of a candidate's process (the programs of tools/runner), before it knows its
// evaluation: it was exec'd by an evaluating child with the protocol's pages as one inherited
// descriptor (runner/protocol.hpp). It dies with that child, keeps no other descriptor, maps the
// pages and closes their descriptor (a writable file it could map executable later), and reads
// where its own program ends in memory (the runner is linked non-PIE at a fixed address, so the
// system-call filter can keep everything below that address from being remapped or reprotected).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/expected.hpp"
#include "sandbox/shared_pages.hpp"

namespace kernelrl::runner {

// The command line the evaluating child starts a runner with (eval/runner_process.cpp):
//   RUNNER --kind host|native|kernelbench --device cpu|cuda --pages-fd N --parent PID
struct RunnerArgs {
  std::string kind;
  bool cuda = false;
  int pages_fd = -1;
  pid_t parent = -1;
};

// An Error names the argument at fault.
common::Expected<RunnerArgs> parse_runner_args(int argc, char** argv);

// Dies with `a.parent` (exits 1 when it is not the parent any more), closes every descriptor but
// stdin, stdout, stderr and the pages', maps the header's pages from that descriptor and closes it.
// An Error when the pages cannot be mapped (nothing can be reported then: the caller exits 1).
common::Expected<sandbox::SharedPages> begin_runner(const RunnerArgs& a);

// The first address past this program's own image (code, read-only data, relocations, data and
// bss), rounded up to a page: the filter's image_end (sandbox/syscall_filter.hpp).
std::uint64_t program_image_end();

}  // namespace kernelrl::runner
