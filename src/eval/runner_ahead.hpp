// Runners forked ahead: a candidate that runs in a process of its own on a GPU (native, with
// EvalOptions::native_candidate_process) or as kernelbench (EvalOptions::kernelbench_candidate_process,
// CPU or GPU) gets that process from its evaluating child, forked at the child's start: before the
// child has anything of its evaluation (a warm child: before its request; any child: before its
// CUDA context, its seeds and its reference). What the runner inherits is the worker's state (the
// interpreter with torch imported, never a candidate's code) and the protocol's header in a memory
// file; it keeps no descriptor of the child's and gets ready (its own CUDA context, and for
// kernelbench torch, the extension loaders and the operator audit) while the child gets ready too.
// The child hands it the evaluation with START (runner/protocol.hpp) when its load phase comes.
// Internal to src/eval.
#pragma once

#include <sys/types.h>

#include <string>

#include "eval/protocol.hpp"
#include "sandbox/shared_pages.hpp"

namespace kernelrl::eval {

enum class RunnerKind { NONE, NATIVE, KERNELBENCH };

// Which runner the request's candidate needs (NONE: it runs in the child, or in a host runner
// forked at its load).
RunnerKind runner_kind(const ChildRequest& request);

// At the start of a fresh child (see above): forks the runner of `kind` (not NONE) for `device`.
// A failure is kept for take_runner_ahead to report.
void fork_runner_ahead(RunnerKind kind, const std::string& device);

struct ForkedRunner {
  sandbox::SharedPages pages;  // the protocol's header (a memory file: grow() it for a CPU data region)
  pid_t pid = -1;
};

// The runner this child forked ahead, for the evaluation's load phase. Throws TaskError when there
// is none of `kind` (the engine's fault) or it could not be forked.
ForkedRunner take_runner_ahead(RunnerKind kind);

}  // namespace kernelrl::eval
