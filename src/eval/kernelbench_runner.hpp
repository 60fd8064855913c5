// The evaluating child's side of a kernelbench candidate in a process of its own (the runner's side
// is eval/kernelbench_serve.hpp). The child keeps the reference, the seeds, the checker, the clock
// and its own interpreter, which the candidate's code never enters; the runner gets the call's
// inputs in slots of shared memory (the pages on the CPU, a device arena mapped through CUDA IPC on a
// GPU) and copies the tensors ModelNew returned into output slots the child sized from the
// reference's outputs. The child judges those bytes. Internal to src/eval.
#pragma once

#include <memory>
#include <string>

#include "eval/child_context.hpp"
#include "eval/runner_candidate.hpp"
#include "eval/runner_process.hpp"

namespace kernelrl::eval {

// The Candidate over `runner` (started ahead for `s`'s evaluation), its shared memory sized for
// `tensor_bytes` of one call's tensors. Throws TaskError when that memory cannot be made.
std::unique_ptr<RunnerCandidate> kernelbench_runner_candidate(const ChildSetup& s, StartedRunner runner,
                                                              std::size_t tensor_bytes, CallRules rules);

// START's text for a kernelbench runner: the candidate's folder (`entry_dir`, its copy in this
// child's scratch folder) and name, the task's init inputs as Python literals and its init seed, the
// pages' size. Throws TaskError when the init inputs are not Python literals.
std::string kernelbench_start_text(const ChildSetup& s, const std::string& entry_dir, std::size_t pages_bytes);

}  // namespace kernelrl::eval
