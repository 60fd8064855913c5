// The phases of an evaluating child, one file each, in the order the decider (child_eval.cpp)
// runs them. Each returns its verdict (or a value to go on with) and never sets the result's
// status: the decider does. Each records its measurements in an Observations. Any may throw
// TaskError (the task or the machine failed) or CandidateRefused (a rule broken between calls).
// Internal to src/eval.
#pragma once

#include <optional>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/child_context.hpp"

namespace kernelrl::eval {

// Setup (child_setup.cpp): device, stream, the reference model, the task's signature, and its
// work per call (TaskWork, which scales the later phases' limits). Only the task's code runs.
ChildSetup set_up(const task::TaskModule& task, const ChildRequest& req, pybind11::module_ torch, Observations& obs);

// Calibration and load (child_load.cpp), in steps around the moment the candidate's code first
// runs: prepare_load sets up what watches a kernelbench candidate here (the tamper guard; in the
// baselines also its loaders and the operator audit) and, in the calibration phase, hands the
// candidate's process its evaluation and times idle calls of it (eval/candidate_process.hpp): no
// candidate code yet. load_candidate restricts this process and loads the candidate (its
// constructors and module code run, in its own process). A verdict when it cannot be loaded.
std::variant<LoadedCandidate, Verdict> prepare_load(const ChildSetup& s, Observations& obs);
void calibrate(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs);
std::optional<Verdict> load_candidate(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs);

// A verdict (REJECTED) when a kernelbench candidate changed what its TamperGuard watches.
std::optional<Verdict> tampered(const LoadedCandidate& loaded);

// Correctness (child_correctness.cpp): n_trials trials on fresh inputs, each judged against the
// reference run on an untouched copy. `sets` keeps the last trials' tensors for timing.
std::optional<Verdict> check_correctness(const ChildSetup& s, LoadedCandidate& loaded, std::vector<InputSet>& sets,
                                         Observations& obs);

// Which call judge_call judges: a correctness trial, or a timed call audited (messages then say
// "while being timed").
enum class CallKind { TRIAL, TIMED };

// The verdict on one candidate call: its inputs and the model's parameters exactly as they were,
// then the reference run on the untouched copy of the inputs and every output compared with the
// candidate's; the reference's outputs are poisoned right after. nullopt when the call is correct.
std::optional<Verdict> judge_call(const ChildSetup& s, const LoadedCandidate& loaded,
                                  const std::vector<pybind11::object>& inputs,
                                  const std::vector<pybind11::object>& pristine,
                                  const std::vector<pybind11::object>& actual, CallKind kind, int trial,
                                  Observations& obs);

// Timing (child_timing.cpp): the candidate over the sets, the reference beside it unless the
// run measured it already, timed calls audited at random and one closing audit per set.
struct Timings {
  TimingSummary runtime;
  TimingSummary ref_runtime;
  // CPU timings: the larger share, of the candidate's or the reference's timed calls, that their
  // threads spent waiting for a CPU (-1: not measured, on a GPU).
  double cpu_wait_fraction = -1;
};
std::variant<Timings, Verdict> time_candidate(const ChildSetup& s, LoadedCandidate& loaded,
                                              std::vector<InputSet>& sets, Observations& obs);

// Task info (child_task_info.cpp): health (degenerate outputs, input size) and, when
// options.time_kernels, the eager reference time (into `ref_runtime`).
nlohmann::json task_info(const ChildSetup& s, std::optional<TimingSummary>& ref_runtime);

}  // namespace kernelrl::eval
