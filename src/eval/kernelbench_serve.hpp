// The process a kernelbench candidate runs in when it runs apart from the evaluating child: the
// program kernelrl-kernelbench-runner, started by the child with fork and exec
// (eval/kernelbench_runner.hpp), so none of the child's memory comes with it: no reference, no
// seeds, no interpreter state. It starts an interpreter of its own and imports torch; on a GPU it
// opens the child's device arena through CUDA IPC in a context of its own (on the CPU the call's
// tensors are in the protocol's pages), imports the task only for get_init_inputs(), confines
// itself as the child does, reports, then serves the protocol (runner/protocol.hpp):
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

namespace kernelrl::eval {

// kernelrl-kernelbench-runner PAGES_FD PAGES_BYTES PARENT_PID ENTRY_DIR DISPLAY_NAME TASK_PATH INIT_SEED DEVICE
// DEVICE is "cpu" (the call's tensors in the pages, after the header) or "cuda" (the arena the
// header names).
int run_kernelbench_runner(int argc, char** argv);

}  // namespace kernelrl::eval
