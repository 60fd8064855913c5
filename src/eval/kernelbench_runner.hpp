// The evaluating child's side of a kernelbench candidate in a process of its own
// (EvalOptions::kernelbench_candidate_process; the runner's side is eval/kernelbench_serve.hpp). The
// child keeps the reference, the seeds, the checker, the clock and its own interpreter, which the
// candidate's code never enters; the runner gets the call's inputs in slots of shared memory (the
// pages on the CPU, a device arena mapped through CUDA IPC on a GPU) and copies the tensors ModelNew
// returned into output slots the child sized from the reference's outputs. The child judges those
// bytes. Internal to src/eval.
#pragma once

#include <memory>

#include "eval/child_context.hpp"
#include "eval/runner_candidate.hpp"

namespace kernelrl::eval {

struct KernelbenchRunnerStart {
  RunnerStart runner;
  // The runner's operator audit of the calls it makes (when asked for and available there).
  std::unique_ptr<OpAudit> op_audit;
};

// Hands `s`'s candidate to the runner forked ahead and loads it there. Throws TaskError when there
// is none or it could not set itself up (no candidate code ran yet).
KernelbenchRunnerStart start_kernelbench_runner(const ChildSetup& s, const RunnerOptions& options, bool audit_ops);

}  // namespace kernelrl::eval
