// The process a kernelbench candidate runs in when it runs apart from the evaluating child. The
// child forks it at its own start (eval/kernelbench_runner.hpp), before it has anything of its
// evaluation (no request when forked ahead, no seeds, no reference, no CUDA context), so what it
// inherits is the worker's interpreter with torch imported and settled. Ahead of the evaluation it
// creates its own CUDA context, sets torch up on the device, installs the prebuilt-extension loaders
// and its operator audit; then it waits for START (runner/protocol.hpp), which names the task, the
// candidate and the pages' size. On START it opens the child's device arena through CUDA IPC (on the
// CPU the call's tensors are in the protocol's pages, extended for them), imports the task only for
// get_init_inputs(), confines itself as the child does, reports, then serves the protocol:
// - LOAD imports candidate.py (its extensions built by the prebuild) and builds ModelNew;
// - ARGS builds the call's argument tuple over the input slots (untimed);
// - ARM flushes the caches (the GPU's L2 with plain CUDA calls, from this context);
// - CALL runs ModelNew under no_grad (under the operator audit when asked), checks that it returned
//   exactly torch.Tensor objects of the output slots' count, shapes and dtypes, takes their data
//   pointers (a non-contiguous output is made contiguous here, inside the call) and synchronises the
//   whole context before answering, so the candidate's work is inside the timed call;
// - COLLECT copies those outputs into the output slots with plain memcpy/cudaMemcpy: no Python and
//   no torch dispatch runs, so nothing the candidate left behind (a mode, a hook) computes there,
//   outside the timer.
// What runs here is the candidate's: the type check and the operator audit share its interpreter and
// are advisory; what decides the verdict (the reference, the comparison, the clock) is in the child.
#pragma once

#include <sys/types.h>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::eval {

// In the process just forked from the child `parent`, which holds `pages` (the protocol's header,
// a memory file the child extends for the CPU's data region): gets ready, serves START and the
// requests after it; never returns. `cuda`: the call's tensors are in the arena the header will name.
[[noreturn]] void serve_kernelbench_runner(sandbox::SharedPages pages, pid_t parent, bool cuda);

}  // namespace kernelrl::eval
