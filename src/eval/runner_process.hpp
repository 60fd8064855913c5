// The candidate's process, as the evaluating child starts it: one of the programs of tools/runner
// (kernelrl-runner for native and host candidates, kernelrl-kernelbench-runner for kernelbench ones),
// exec'd at the child's own start, before the child has anything of its evaluation (a warm child:
// before its request; any child: before its CUDA context, its seeds and its reference). It inherits
// one descriptor, the protocol's pages (a memory file: runner/protocol.hpp), and nothing of this
// process's memory; it gets ready (its CUDA context, its interpreter) while the child gets ready too,
// and the child hands it the evaluation with START when its calibration phase comes.
// Internal to src/eval.
#pragma once

#include <sys/types.h>

#include <string>

#include "eval/protocol.hpp"
#include "sandbox/shared_pages.hpp"

namespace kernelrl::eval {

enum class RunnerKind { NONE, HOST, NATIVE, KERNELBENCH };

// Which program the request's candidate runs in (NONE: it runs in the child, the baselines that
// measure what the separation costs, or with the defenses off).
RunnerKind runner_kind(const ChildRequest& request);

// At the start of a fresh child (see above): starts the runner of `kind` (not NONE) for `device`.
// A failure is kept for take_runner to report.
void start_runner_ahead(RunnerKind kind, const std::string& device);

struct StartedRunner {
  sandbox::SharedPages pages;  // the protocol's header (a memory file: grow() it for a CPU data region)
  pid_t pid = -1;
};

// The pid of the runner start_runner_ahead started in this process, or -1.
pid_t runner_ahead_pid();

// The runner this child started, for the evaluation. Throws TaskError when there is none of `kind`
// (the engine's fault) or it could not be started.
StartedRunner take_runner(RunnerKind kind);

}  // namespace kernelrl::eval
