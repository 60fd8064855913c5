// The process a host candidate runs in (the program tools/runner, --kind host): exec'd by the
// evaluating child at the child's start, where it confines its files at once (runner/confine.hpp).
// On START (runner/protocol.hpp: the candidate's library, put in the child's scratch folder, and the
// pages' size) it maps the data region the child extended the pages with, confines its calls,
// reports, then serves: IDLE calls before the candidate is loaded, LOAD, and calls of
// kernelrl_forward over views of the pages. No Python, no torch, no CUDA run here.
#pragma once

#include <sys/types.h>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::runner {

// Serves START ({"artifact": PATH, "pages_bytes": N}) and the requests after it; never returns.
[[noreturn]] void serve_host_runner(sandbox::SharedPages pages, pid_t parent);

}  // namespace kernelrl::runner
