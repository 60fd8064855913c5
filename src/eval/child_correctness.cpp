// The correctness phase of an evaluating child (child_phases.hpp), and the judgement of one call
// that the timing phase's audits share.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <thread>

#include "eval/check_outputs.hpp"
#include "eval/child_phases.hpp"
#include "eval/gpu.hpp"
#include "eval/held_memory.hpp"
#include "eval/torch_tensors.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// check_outputs, with an output that cannot even be compared (an exotic dtype, a tensor torch
// refuses to copy) reported as wrong rather than as a failure of the evaluation.
OutputCheck checked_outputs(const std::vector<py::object>& actual, const std::vector<py::object>& expected,
                            const EvalOptions& options, common::RuleSet rules) {
  try {
    return check_outputs(actual, expected, options, rules);
  } catch (py::error_already_set& e) {
    OutputCheck bad;
    bad.details.message = std::string("the outputs cannot be compared: ") + e.what();
    return bad;
  } catch (const std::exception& e) {
    OutputCheck bad;
    bad.details.message = std::string("the outputs cannot be compared: ") + e.what();
    return bad;
  }
}

// Fresh inputs under a new seed (recorded), poisoned preallocated outputs, staged for the call.
// Returns the untouched copy of the inputs the reference will run on.
std::vector<py::object> draw_trial(const ChildSetup& s, Candidate& cand, InputSet& set, Observations& obs) {
  std::uint64_t seed = fresh_seed();
  obs.seeds.push_back(seed);
  set.args.inputs = s.fresh_inputs(seed);
  std::vector<py::object> pristine = clone_all(set.args.inputs);
  set.args.input_views = make_views(set.args.inputs);
  if (cand.uses_preallocated_outputs()) {
    set.args.outputs.clear();
    for (const auto& spec : s.output_specs) set.args.outputs.push_back(s.empty_like(spec));
    set.args.output_views = make_views(set.args.outputs);
  }
  if (s.req.options.defenses) {
    for (auto& o : set.args.outputs) poison(o);
  }
  stage(cand, set);
  return pristine;
}

// The device memory a trial's call kept after returning, beyond the limit (eval/held_memory.hpp):
// a REJECTED verdict. `before` was read before the call.
std::optional<Verdict> held_memory_verdict(const ChildSetup& s, const gpu::DeviceMemory& before, int trial) {
  auto after = gpu::device_memory();
  if (!after) throw TaskError{"cannot read the device's free memory: " + after.error().message};
  const auto limit = held_memory_limit(before.total_bytes, s.req.options.max_held_device_mb);
  std::uint64_t confirmed = after->free_bytes;
  if (held_beyond(before.free_bytes, after->free_bytes, limit)) {  // ours, or another's for a moment?
    std::this_thread::sleep_for(kConfirmDelay);
    auto again = gpu::device_memory();
    if (!again) throw TaskError{"cannot read the device's free memory: " + again.error().message};
    confirmed = again->free_bytes;
  }
  if (auto refused = held_memory_refusal(before.free_bytes, after->free_bytes, confirmed, limit)) {
    return make_verdict(common::Status::REJECTED, *refused, trial);
  }
  return std::nullopt;
}

// Runs one trial: fresh inputs, poisoned outputs, the candidate first, then the reference on an
// untouched copy. A verdict when the candidate failed.
std::optional<Verdict> run_trial(const ChildSetup& s, LoadedCandidate& loaded, int trial, InputSet& set,
                                 Observations& obs) {
  Candidate& cand = *loaded.candidate;
  auto t_step = child_clock::now();
  std::vector<py::object> pristine = draw_trial(s, cand, set, obs);
  std::optional<gpu::DeviceMemory> memory_before;
  if (s.cuda) {
    if (auto synced = gpu::synchronize_and_check(); !synced) {
      throw TaskError{"CUDA failed before the candidate ran: " + synced.error().message};
    }
    if (s.req.options.defenses) {
      auto m = gpu::device_memory();
      if (!m) throw TaskError{"cannot read the device's free memory: " + m.error().message};
      memory_before = *m;
    }
  }
  add_step(obs.phases_ms, "correctness.draw", t_step);

  CallOutcome outcome;
  std::vector<std::string> refused;
  if (loaded.op_audit) {
    refused = loaded.op_audit->refused_ops_during([&] { outcome = cand.call(set.args, s.stream); });
  } else {
    outcome = cand.call(set.args, s.stream);
  }
  if (!refused.empty()) {
    return make_verdict(common::Status::REJECTED,
                        "ModelNew.forward ran PyTorch operators instead of the candidate's own kernels: " + joined(refused) +
                            " (kernelbench candidates may use torch only to allocate, view, copy or fill tensors)",
                        trial);
  }
  if (!outcome.failure && s.cuda) {
    if (auto synced = gpu::synchronize_and_check(); !synced) {
      outcome.failure = CallFailure{"CUDA error after the candidate's call: " + synced.error().message};
    }
  }
  if (!outcome.failure && memory_before) {
    if (auto held = held_memory_verdict(s, *memory_before, trial)) return held;
  }
  add_step(obs.phases_ms, "correctness.candidate", t_step);
  if (outcome.failure) {
    return make_verdict(outcome.failure->rule_broken ? common::Status::REJECTED : common::Status::RUNTIME_ERROR,
                        outcome.failure->message, trial);
  }
  collect(cand, set);
  check_between_calls(cand);
  std::vector<py::object> actual = cand.uses_preallocated_outputs() ? set.args.outputs : outcome.outputs;
  set.last_outputs = actual;

  return judge_call(s, loaded, set.args.inputs, pristine, actual, CallKind::TRIAL, trial, obs);
}

}  // namespace

std::optional<Verdict> judge_call(const ChildSetup& s, const LoadedCandidate& loaded, const std::vector<py::object>& inputs,
                                  const std::vector<py::object>& pristine, const std::vector<py::object>& actual,
                                  CallKind kind, int trial, Observations& obs) {
  const std::string when = kind == CallKind::TIMED ? " while being timed" : "";
  if (auto verdict = tampered(loaded)) return verdict;
  auto wrong = [&](const std::string& message, int index) {
    Verdict v = make_verdict(common::Status::WRONG_OUTPUT, message, trial);
    if (index >= 0) v.error.output_index = index;
    return v;
  };
  const bool defended = s.req.options.defenses;
  const std::string step = kind == CallKind::TIMED ? "audit." : "correctness.";
  auto t_step = child_clock::now();
  if (auto bad = defended ? first_changed(inputs, pristine) : -1; bad >= 0) {
    return wrong("the candidate modified input " + std::to_string(bad) + when + " (inputs are read-only)", bad);
  }
  if (auto bad = defended ? first_changed(s.params, s.params_snapshot) : -1; bad >= 0) {
    return wrong("the candidate modified parameter " + std::to_string(bad) + when + " (parameters are read-only)", -1);
  }
  add_step(obs.phases_ms, step + "inputs_unchanged", t_step);
  std::vector<py::object> expected;
  try {
    expected = output_list(s.call_reference(pristine));
  } catch (py::error_already_set& e) {
    // The reference ran cleanly during setup, so a failure now follows from what the candidate did.
    return make_verdict(common::Status::RUNTIME_ERROR, "the reference failed after the candidate ran" + when + ": " +
                                                           task::format_python_error(e.what(), ""),
                        trial);
  }
  add_step(obs.phases_ms, step + "reference", t_step);
  OutputCheck check = checked_outputs(actual, expected, s.req.options, judging_rules(s.req));
  if (defended) {
    for (auto& o : expected) poison(o);  // the reference's outputs never stay readable on the device
  }
  add_step(obs.phases_ms, step + "compare", t_step);
  obs.tolerance = check.tolerance;
  if (!check.ok) {
    Verdict v{common::Status::WRONG_OUTPUT, check.details};
    if (kind == CallKind::TIMED) v.error.message = "outputs of timed calls are wrong: " + check.details.message;
    v.error.trial = trial;
    return v;
  }
  return std::nullopt;
}

std::optional<Verdict> check_correctness(const ChildSetup& s, LoadedCandidate& loaded, std::vector<InputSet>& sets,
                                         Observations& obs) {
  auto t_check = child_clock::now();
  const int n_keep = std::min(2, std::max(1, s.req.options.n_trials));
  sets.assign(static_cast<std::size_t>(n_keep), InputSet{});
  for (int trial = 0; trial < s.req.options.n_trials; ++trial) {
    InputSet& set = sets[static_cast<std::size_t>(trial % n_keep)];
    if (auto verdict = run_trial(s, loaded, trial, set, obs)) {
      obs.phases_ms["correctness"] = ms_since(t_check);
      return verdict;
    }
    if (trial == 0) obs.phases_ms["correctness.first_trial"] = ms_since(t_check);
  }
  obs.phases_ms["correctness"] = ms_since(t_check);
  return std::nullopt;
}

}  // namespace kernelrl::eval
