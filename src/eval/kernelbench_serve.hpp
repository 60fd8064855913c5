// The process a kernelbench candidate runs in (the program tools/runner's kernelrl-kernelbench-runner,
// exec'd by the evaluating child at the child's start, before the child has anything of its
// evaluation). Ahead of the evaluation it starts its own interpreter and imports torch, creates its
// own CUDA context, installs the prebuilt-extension loaders and what records every call below Python
// (audit/call_recorder.hpp: the PyTorch operators dispatched, the kernels launched); then it waits
// for START (runner/protocol.hpp), which names the task, the candidate and the pages' size. On START
// it opens the child's device arena through CUDA IPC (on the CPU the call's tensors are
// in the protocol's pages, extended for them), imports the task only for get_init_inputs(),
// confines itself (runner/confine.hpp), reports, and serves the protocol:
// - IDLE (before LOAD): an L2 flush of its context and a wait for it, no candidate code;
// - LOAD imports candidate.py (its extensions built by the prebuild) and builds ModelNew;
// - ARGS builds the call's argument tuple over the input slots (untimed);
// - CALL enqueues an L2 flush of its context (its launches queue behind it), runs ModelNew under
//   no_grad, checks that it returned exactly torch.Tensor objects of the output slots' count, shapes
//   and dtypes, takes their data pointers (a non-contiguous output is made contiguous here, inside
//   the call) and synchronises the whole context before answering;
// - RECORD (untimed) answers with the call's record (operators, launches) in the audit text;
// - COLLECT copies those outputs into the output slots with plain memcpy/cudaMemcpy: no Python and
//   no torch dispatch runs, so nothing the candidate left behind (a mode, a hook) computes there.
// What runs here is the candidate's: the type check and the records share its process and are
// layers of their own; what decides the verdict (the reference, the comparison, the clock) is in
// the child.
#pragma once

#include <sys/types.h>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::eval {

// In the runner program, whose pages (the protocol's header, a memory file the child extends for
// the CPU's data region) are mapped: starts the interpreter, gets ready, serves START and the
// requests after it; never returns. `cuda`: the call's tensors are in the arena the header will name.
[[noreturn]] void serve_kernelbench_runner(sandbox::SharedPages pages, pid_t parent, bool cuda);

}  // namespace kernelrl::eval
