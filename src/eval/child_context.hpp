// What the phases of an evaluating child share (child_eval.hpp runs them): the task as setup
// prepared it (read-only afterwards), the loaded candidate with the guards around it, the input
// sets the correctness trials leave for timing, what the phases measure on the side, and the one
// thing a phase hands back to the decider: its verdict. Internal to src/eval.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.hpp"
#include "eval/candidate.hpp"
#include "eval/op_audit.hpp"
#include "eval/protocol.hpp"
#include "eval/result.hpp"
#include "eval/runner_candidate.hpp"
#include "eval/tamper_guard.hpp"
#include "eval/time_limits.hpp"
#include "task/task.hpp"

namespace kernelrl::eval {

using child_clock = std::chrono::steady_clock;

// Milliseconds since `t0`.
double ms_since(child_clock::time_point t0);

// Adds the milliseconds since `t0` to `phases_ms[key]` and restarts `t0`: the steps inside a phase
// ("correctness.draw", "timing.redraw", ...), summed over its trials or calls.
void add_step(std::map<std::string, double>& phases_ms, const std::string& key, child_clock::time_point& t0);

// "a, b, c": the names of refused operators in a message.
std::string joined(const std::vector<std::string>& names);

// A seed from getrandom(): the candidate cannot predict it. Non-negative (torch.manual_seed).
std::uint64_t fresh_seed();

// The task (or the machine) is at fault: "could not evaluate". Thrown by any phase; once the
// candidate's code has run, the decider blames the candidate instead (child_eval.cpp).
struct TaskError {
  std::string message;
};

// A rule the candidate broke between calls (Candidate::refusal_between_calls): REJECTED. Thrown,
// because it is found inside the timer's callbacks; the decider turns it into the verdict.
struct CandidateRefused {
  std::string message;
};

// Why the candidate is not correct, as one phase concluded: the status (never OK) and the details.
struct Verdict {
  common::Status status = common::Status::RUNTIME_ERROR;
  ErrorDetails error;
};
Verdict make_verdict(common::Status status, std::string message, int trial = -1);

// What the phases measure and record beside the verdict: the EvalResult fields of the same names.
struct Observations {
  std::map<std::string, double> phases_ms;
  std::vector<std::uint64_t> seeds;  // init seed first, then one per correctness trial
  nlohmann::json isolation;
  nlohmann::json tolerance;          // the last judged call's
  nlohmann::json device_info;
  nlohmann::json versions;
};

// The task in this child as setup prepared it: device, stream, the reference model and its
// parameters (with an untouched copy), the signature and the task's own work per call. Nothing
// changes it after setup; the candidate's calls are judged against it.
struct ChildSetup {
  ChildSetup(const task::TaskModule& task, const ChildRequest& req, pybind11::module_ torch)
      : task(task), req(req), torch(std::move(torch)) {}

  const task::TaskModule& task;
  const ChildRequest& req;
  pybind11::module_ torch;
  pybind11::object device;
  bool cuda = false;
  void* stream = nullptr;
  std::int64_t l2_bytes = 0;
  pybind11::object precision;  // torch dtype the models and floating inputs are cast to, or None
  pybind11::object model;
  pybind11::object init_inputs;
  std::uint64_t init_seed = 0;
  std::vector<pybind11::object> params;
  std::vector<pybind11::object> params_snapshot;
  std::vector<task::TensorSpec> output_specs;
  std::size_t call_tensor_bytes = 0;  // inputs, params and outputs of one call (the signature's)
  task::Signature signature;
  TaskWork work;                      // the task's draw and eager forward, timed in setup

  // The reference's forward under torch.no_grad(). Python errors propagate.
  pybind11::object call_reference(const std::vector<pybind11::object>& inputs) const;
  // get_inputs() under `seed`, on the device, floating tensors at `precision`. On a GPU with
  // torch >= 2.0 it runs with the device as the default, so torch.randn & co. draw there (10^8
  // numbers drawn on the CPU take seconds).
  std::vector<pybind11::object> fresh_inputs(std::uint64_t seed) const;
  // An uninitialised tensor of `spec`'s shape and dtype on the device.
  pybind11::object empty_like(const task::TensorSpec& spec) const;
};

// The candidate as the load phase left it, with what watches it: its process before the load
// (`runner`, which becomes `candidate`), the clock's cost around one of its calls, and for
// kernelbench the tamper guard over this interpreter (a check that nothing of the candidate's came
// in) and, in the in-child baseline, the PyTorch operator audit.
struct LoadedCandidate {
  std::unique_ptr<Candidate> candidate;
  std::unique_ptr<RunnerCandidate> runner;  // set in the calibration phase, moved into `candidate` by the load
  double idle_call_ms = 0;                  // subtracted from each timed call of a candidate in a process of its own
  std::optional<TamperGuard> guard;
  std::unique_ptr<OpAudit> op_audit;
};

// One correctness trial's tensors, reused by timing (which, defended, draws fresh inputs for
// every call). The reference's outputs are not kept anywhere the candidate could read them: an
// audited call's inputs are copied before the call and the reference runs on that copy after it.
struct InputSet {
  CallArgs args;
  std::vector<pybind11::object> last_outputs;  // what the last call wrote or returned
};

// Throws CandidateRefused when the candidate broke a rule outside its calls.
void check_between_calls(Candidate& cand);

// The call's tensors where the candidate reads them (Candidate::stage), after check_between_calls.
// Throws TaskError when they do not fit: the task's inputs grew after its signature was taken.
void stage(Candidate& cand, InputSet& set);

// What the call changed that `set` does not show, brought back before the call is judged
// (Candidate::collect). Throws TaskError when that fails.
void collect(Candidate& cand, InputSet& set);

}  // namespace kernelrl::eval
