// The system-call filter a child installs before it runs candidate code (seccomp-BPF, x86-64).
// A candidate may compute and start threads; it may not start processes, exec programs, open
// network sockets, signal, trace or poke other processes, or change mounts, namespaces or modules. Such a
// call kills the child with SIGSYS, which the engine reports as REJECTED. A build that runs
// candidate code (the kernelbench prebuild, which must start compilers) gets the Build profile:
// processes and exec allowed, the rest as for a candidate except signals. The process that runs a
// candidate apart (kernelrl-runner's, exec'd fresh) gets the runner filter: the Candidate profile plus
// W^X, an immutable runner image, no file creation and nothing root could do to the host. The rules
// are tables (syscall_filter.cpp) compiled to BPF by sandbox/seccomp_rules.hpp.
#pragma once

#include <cstdint>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

enum class FilterProfile {
  Candidate,  // no processes, exec, network, signals to others, tracing, mounts, namespaces, modules
  Build,      // processes, exec and signals allowed (compilers, their job servers); no network, tracing,
              // mounts, namespaces, modules
};

// Installs the filter in the calling process (and its future threads and, for Build, the processes
// it starts); irreversible. Its own pid is built in (signals to itself stay allowed), so install it
// in the process it guards. Fails when the kernel has no seccomp or the architecture is not x86-64.
common::Fallible install_syscall_filter(FilterProfile profile = FilterProfile::Candidate);

// One line for messages and docs: what the filter forbids.
const char* syscall_filter_summary(FilterProfile profile = FilterProfile::Candidate);

struct RunnerFilterOptions {
  // The runner program's image lies below this address (it is linked non-PIE at 0x400000): no call may
  // unmap, re-protect, advise, move or map over anything below it. Its page-rounded end (&_end), not
  // more: the heap, the libraries and CUDA's fixed reservations lie above and must stay usable. 0: no rule.
  std::uint64_t image_end = 0;
};

// Installs the runner filter in every thread of the calling process (SECCOMP_FILTER_FLAG_TSYNC) and
// the threads it starts; irreversible. Kills (SIGSYS) what the Candidate profile kills, and: memory
// that is or was writable becoming executable (anonymous, shared or writable PROT_EXEC mappings,
// mprotect to PROT_EXEC, memfd, the READ_IMPLIES_EXEC personality), changes to the image below
// `image_end`, renaming, linking, deleting, truncating by path or re-owning files, handle-based opens,
// and what root may do to the host (clocks, keys, BPF, perf, mounts, resource limits, ids, I/O ports).
// Opens with O_CREAT, O_TRUNC or O_TMPFILE and mkdir fail with EACCES instead (the CUDA driver makes
// such calls and survives their failure). Install it after the CUDA context exists: cuInit, run as
// root, unlinks and re-links /dev/char entries, which this filter kills. Its own pid is built in.
// Fails, installing nothing, without seccomp or when the process already has READ_IMPLIES_EXEC
// (every readable mapping would be executable).
common::Fallible install_runner_filter(const RunnerFilterOptions& options);

// One line for messages and docs: what the runner filter forbids beyond the Candidate profile.
const char* runner_filter_summary();

}  // namespace kernelrl::sandbox
