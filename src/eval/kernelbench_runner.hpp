// The evaluating child's side of a kernelbench candidate in a process of its own
// (EvalOptions::kernelbench_candidate_process; the runner's side is eval/kernelbench_serve.hpp). The
// child keeps the reference, the seeds, the checker, the clock and its own interpreter, which the
// candidate's code never enters; the runner gets the call's inputs in slots of shared memory (the
// pages on the CPU, a device arena mapped through CUDA IPC on a GPU) and copies the tensors ModelNew
// returned into output slots the child sized from the reference's outputs. The child judges those
// bytes. Internal to src/eval.
#pragma once

#include <memory>
#include <string>

#include "eval/child_context.hpp"
#include "eval/protocol.hpp"
#include "eval/runner_candidate.hpp"

namespace kernelrl::eval {

struct KernelbenchRunnerStart {
  RunnerStart runner;
  // The runner's operator audit of the calls it makes (when asked for and available there).
  std::unique_ptr<OpAudit> op_audit;
};

// Whether the request's candidate runs in a process of its own (kernelbench, defenses on,
// EvalOptions::kernelbench_candidate_process): its child forks the runner ahead.
bool uses_kernelbench_runner(const ChildRequest& request);

// At the start of a child that has nothing of an evaluation yet (no request when it is forked
// ahead, no CUDA context, no seeds, no reference): forks the runner (eval/kernelbench_serve.hpp),
// which gets ready ("cuda": its own context) while the child does. A failure is kept for
// start_kernelbench_runner to report.
void fork_kernelbench_runner_ahead(const std::string& device);

// Hands `s`'s candidate to the runner forked ahead and loads it there. Throws TaskError when there
// is none or it could not set itself up (no candidate code ran yet).
KernelbenchRunnerStart start_kernelbench_runner(const ChildSetup& s, const RunnerOptions& options, bool audit_ops);

}  // namespace kernelrl::eval
