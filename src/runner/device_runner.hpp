// The process a native candidate runs in on a GPU when it runs apart from the evaluating child.
// The child forks it at its own start (eval/runner_ahead.hpp), before it has anything of its
// evaluation and before its CUDA context (a process forked after CUDA started cannot use CUDA).
// Ahead of the evaluation it creates its own CUDA context; on START (runner/protocol.hpp: the
// candidate's library) it opens the child's device arena through CUDA IPC, confines itself as the
// child does (write confinement, system-call filter), reports, loads the candidate and serves calls:
// each call is the candidate's kernelrl_forward on its own stream over views of the arena, then the
// whole context synchronised and its error read, before the loop answers. A device reset or a
// broken context there breaks only the runner's context; the child reads the outputs from its own
// mapping. No Python and no torch run here.
#pragma once

#include <sys/types.h>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::runner {

// In the process just forked from the child `parent`, which holds `pages` (the protocol's header):
// gets ready, serves START ({"artifact": PATH}) and the requests after it; never returns.
[[noreturn]] void serve_device_runner(sandbox::SharedPages pages, pid_t parent);

}  // namespace kernelrl::runner
