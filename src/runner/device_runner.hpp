// The process a native candidate runs in on a GPU (the program tools/runner, --kind native). Exec'd
// by the evaluating child at the child's start, before the child has anything of its evaluation;
// it confines its files at once (runner/confine.hpp), then creates its own CUDA context ahead of
// the evaluation. On START (runner/protocol.hpp: the candidate's library, put in the child's scratch
// folder) it opens the child's device arena through CUDA IPC, confines its calls,
// reports, then serves: IDLE calls before the candidate is
// loaded, LOAD, and calls: each the candidate's kernelrl_forward on its own stream over views of the
// arena behind an L2 flush of this context, then the whole context synchronised and its error read
// before the answer. No Python and no torch run here.
#pragma once

#include <sys/types.h>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::runner {

// Gets ready, serves START ({"artifact": PATH}) and the requests after it; never returns.
[[noreturn]] void serve_device_runner(sandbox::SharedPages pages, pid_t parent);

}  // namespace kernelrl::runner
