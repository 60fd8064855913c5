// The timing phase of an evaluating child (child_phases.hpp): the candidate's calls timed the way
// the protocol says (eval/timing.hpp), defended against a candidate that answers differently when
// it believes it is not being checked.
#include <pybind11/pybind11.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "eval/child_phases.hpp"
#include "eval/timing.hpp"
#include "eval/torch_tensors.hpp"
#include "sandbox/thread_census.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// Which timed calls are audited: each with probability kAuditProbability, from getrandom(), so a
// candidate cannot tell an audited call from another; at this rate one that cheats on half of 100
// timed calls is missed with probability 0.9^50 (0.5%). After timing, one more call per set, drawn
// and run like a timed one, is always audited (the only audit when few calls fit the budget).
constexpr double kAuditProbability = 0.1;

std::vector<bool> draw_audits(int n_reps) {
  std::vector<bool> audited(static_cast<std::size_t>(std::max(0, n_reps)));
  const auto threshold = static_cast<std::uint64_t>(kAuditProbability * static_cast<double>(1ull << 63));
  for (std::size_t i = 0; i < audited.size(); ++i) audited[i] = fresh_seed() < threshold;
  return audited;
}

// One timed (or closing) call; what it wrote (the preallocated outputs) or returned (a kernelbench
// call's) becomes the set's last outputs, which an audit judges. The preallocated ones are named
// again after every call: an audited call apart replaces them by a snapshot (time_candidate), and
// an audit after it must not judge that earlier call's copy (found on the H100 by the closing audits).
common::Fallible call_for_timing(const ChildSetup& s, Candidate& cand, InputSet& set) {
  CallOutcome o = cand.call(set.args, s.stream);
  if (o.failure) return common::make_error(o.failure->message);
  set.last_outputs = cand.uses_preallocated_outputs() ? set.args.outputs : std::move(o.outputs);
  return common::Ok{};
}

// Before every warm-up and timed call (outside the timed region, defended): the outputs poisoned
// again, and fresh inputs from get_inputs() under a new seed in place of the set's (a candidate
// that caches its answer by input pointer, shape, sampled values or call count answers stale). An
// audited call also gets an untouched copy of them, returned; any other call costs no copy.
std::vector<py::object> redraw_inputs(const ChildSetup& s, InputSet& set, bool audited) {
  for (auto& o : set.args.outputs) poison(o);
  std::vector<py::object> fresh = s.fresh_inputs(fresh_seed());
  for (std::size_t i = 0; i < fresh.size() && i < set.args.inputs.size(); ++i) {
    if (is_tensor(fresh[i])) set.args.inputs[i] = fresh[i];
  }
  set.args.input_views = make_views(set.args.inputs);
  return audited ? clone_all(set.args.inputs) : std::vector<py::object>{};
}

// Audits one call: inputs and parameters unchanged, outputs matching the reference run on the
// copy taken before the call (judge_call, "while being timed").
// Counted in `isolation.audited_calls` when it passes.
std::optional<Verdict> audit_call(const ChildSetup& s, const LoadedCandidate& loaded, InputSet& set,
                                  const std::vector<py::object>& pristine, Observations& obs) {
  collect(*loaded.candidate, set);
  check_between_calls(*loaded.candidate);
  if (auto verdict = judge_call(s, loaded, set.args.inputs, pristine, set.last_outputs, CallKind::TIMED, -1, obs)) {
    return verdict;
  }
  obs.isolation["audited_calls"] = obs.isolation.value("audited_calls", 0) + 1;
  return std::nullopt;
}

// After timing: one more call per set, prepared and run like a timed call (fresh inputs, poisoned
// outputs, L2 flush), then audited. A verdict when one fails.
std::optional<Verdict> closing_audits(const ChildSetup& s, const LoadedCandidate& loaded, CallTimer& timer,
                                      std::vector<InputSet>& sets, Observations& obs) {
  Candidate& cand = *loaded.candidate;
  for (auto& set : sets) {
    std::vector<py::object> pristine = redraw_inputs(s, set, true);
    stage(cand, set);
    std::vector<std::string> refused;  // kernelbench: the operator audit covers these calls too
    common::Fallible called = timer.call_untimed(
        [&]() -> common::Fallible {
          if (!loaded.op_audit) return call_for_timing(s, cand, set);
          common::Fallible call = common::Ok{};
          refused = loaded.op_audit->refused_ops_during([&] { call = call_for_timing(s, cand, set); });
          return call;
        },
        s.req.options);
    if (!refused.empty()) {
      return make_verdict(common::Status::REJECTED,
                          "ModelNew.forward ran PyTorch operators after timing (the last audited call) instead of the "
                          "candidate's own kernels: " + joined(refused));
    }
    if (!called) return make_verdict(common::Status::RUNTIME_ERROR, "failed while timing: " + called.error().message);
    if (auto verdict = audit_call(s, loaded, set, pristine, obs)) return verdict;
  }
  return std::nullopt;
}

// The candidate's timed calls less the clock's cost around one (an idle call's, measured before
// the candidate was loaded), each at least kShortestCallMs.
constexpr double kShortestCallMs = 0.001;
void subtract_idle(std::vector<double>& times_ms, double idle_ms) {
  for (double& t : times_ms) t = std::max(t - idle_ms, kShortestCallMs);
}

// Drops the times of `reps` (calls audited in a way that costs time inside the clock) from
// `times`, unless that would leave none.
void drop_reps(std::vector<double>& times, const std::vector<int>& reps) {
  if (reps.empty() || reps.size() >= times.size()) return;
  std::vector<double> kept;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (std::find(reps.begin(), reps.end(), static_cast<int>(i)) == reps.end()) kept.push_back(times[i]);
  }
  times = std::move(kept);
}

}  // namespace

// Times the candidate over the sets (rotating), audits timed calls at random and one more call per
// set after timing. The reference, unless the run already measured it, is timed the same way in
// the same loop: each timed candidate call is followed by a timed reference call on the same
// inputs (CallTimer::run_paired), so a drift of the machine reaches both medians alike.
std::variant<Timings, Verdict> time_candidate(const ChildSetup& s, LoadedCandidate& loaded, std::vector<InputSet>& sets,
                                              Observations& obs) {
  Candidate& cand = *loaded.candidate;
  // A candidate in another CUDA context is timed on the host clock, less that clock's cost around a
  // call (measured before the candidate was loaded: eval/candidate_process.hpp); the reference
  // beside it keeps this context's events, the measure a cached reference time has too.
  const bool host_clock = s.cuda && cand.in_another_cuda_context();
  const std::optional<TimingSummary> cached_ref = s.req.cached_ref;
  auto timer = CallTimer::create(s.cuda, s.stream, s.l2_bytes, host_clock);
  if (!timer) throw TaskError{"cannot set up the timer: " + timer.error().message};
  if (!s.cuda) {
    // The threads doing a CPU call's work: the candidate's own process's and this thread (which
    // asks and is woken by the answer), or every thread of this process when the candidate runs here.
    (*timer)->measure_cpu_wait([self = ::getpid(), me = ::gettid(), other = cand.process_id()]() {
      if (!other) return sandbox::cpu_wait_ns(self);
      auto waited = sandbox::thread_cpu_wait_ns(self, me);
      auto waited_other = sandbox::cpu_wait_ns(*other);
      if (!waited || !waited_other) return waited ? waited_other : waited;
      return common::Expected<std::int64_t>(*waited + *waited_other);
    });
  }
  std::unique_ptr<CallTimer> ref_timer;
  if (host_clock) {
    auto events = CallTimer::create(s.cuda, s.stream, s.l2_bytes);
    if (!events) throw TaskError{"cannot set up the reference's timer: " + events.error().message};
    ref_timer = std::move(*events);
  }
  const bool defended = s.req.options.defenses;
  const std::vector<bool> audited = defended ? draw_audits(s.req.options.max_reps) : std::vector<bool>{};
  int n_prepared = 0;  // warm-up calls first, then timed ones
  std::vector<py::object> pristine;
  std::optional<Verdict> audit_failed;
  auto t0 = child_clock::now();
  // A kernelbench timed call audited at random also runs under the operator audit, so PyTorch
  // operators used only outside the correctness trials are seen; the mode's overhead would be
  // timed, so those calls' times are left out of the median (the candidate cannot tell which
  // calls they are).
  std::vector<int> operator_audited;  // timed reps run under the operator audit
  std::string refused_in_timed_call;
  // A timed call audited at random of a GPU candidate in another context: its outputs are copied
  // here right after its answer, inside the clock, and the copy is what the audit judges, so work
  // its process left running past the answer is either timed (the copy waits for the GPU to come
  // back to this context) or found unfinished. Its time includes the copy: left out of the median.
  std::vector<int> snapshotted;
  const auto candidate_call = [&](int rep) -> common::Fallible {
    InputSet& set = sets[rep % sets.size()];
    if (host_clock && cand.uses_preallocated_outputs() && !pristine.empty()) {
      auto called = call_for_timing(s, cand, set);
      set.last_outputs = clone_all(set.args.outputs);
      snapshotted.push_back(rep);
      return called;
    }
    if (!loaded.op_audit || pristine.empty()) return call_for_timing(s, cand, set);
    common::Fallible call = common::Ok{};
    const auto refused = loaded.op_audit->refused_ops_during([&] { call = call_for_timing(s, cand, set); });
    operator_audited.push_back(rep);
    for (const auto& op : refused) refused_in_timed_call += (refused_in_timed_call.empty() ? "" : ", ") + op;
    return refused.empty() ? call : common::make_error("PyTorch operators in a timed call");
  };
  std::string reference_error;  // the task's failure, not the candidate's
  const auto reference_call = [&](int rep) -> common::Fallible {  // its warm-up and timed calls: step timing.reference
    auto t_step = child_clock::now();
    try {
      s.call_reference(sets[rep % sets.size()].args.inputs);
    } catch (py::error_already_set& e) {
      reference_error = std::string("the reference raised: ") + e.what();
      return common::make_error(reference_error);
    }
    add_step(obs.phases_ms, "timing.reference", t_step);
    return common::Ok{};
  };
  const std::function<void(int)> prepare = [&](int rep) {
    auto t_step = child_clock::now();
    if (defended) {
      const int timed_rep = n_prepared++ - s.req.options.n_warmup;
      const bool audit = timed_rep >= 0 && static_cast<std::size_t>(timed_rep) < audited.size() && audited[timed_rep];
      pristine = redraw_inputs(s, sets[rep % sets.size()], audit);
    }
    stage(cand, sets[rep % sets.size()]);
    add_step(obs.phases_ms, "timing.redraw", t_step);
  };
  const std::function<common::Fallible(int)> after = [&](int rep) -> common::Fallible {
    if (pristine.empty()) return common::Ok{};
    auto t_step = child_clock::now();
    audit_failed = audit_call(s, loaded, sets[rep % sets.size()], pristine, obs);
    pristine.clear();
    add_step(obs.phases_ms, "timing.audits", t_step);
    if (audit_failed) {
      audit_failed->error.message += " (timed call " + std::to_string(rep + 1) + ", audited at random)";
      return common::make_error("a timed call failed its audit");
    }
    return common::Ok{};
  };
  const CallTimer::Call arm = [&](int) { return cand.arm(); };
  std::optional<std::vector<double>> ref_times;
  common::Expected<std::vector<double>> times = std::vector<double>{};
  if (cached_ref) {
    times = (*timer)->run(candidate_call, s.req.options, prepare, after, arm);
  } else {
    auto paired =
        (*timer)->run_paired(candidate_call, reference_call, s.req.options, prepare, after, arm, ref_timer.get());
    if (!reference_error.empty()) throw TaskError{"timing the reference failed: " + reference_error};
    if (paired) {
      times = std::move(paired->a_ms);
      ref_times = std::move(paired->b_ms);
    } else {
      times = paired.error();
    }
  }
  if (audit_failed) return *audit_failed;
  if (!refused_in_timed_call.empty()) {
    return make_verdict(common::Status::REJECTED,
                        "ModelNew.forward ran PyTorch operators in a timed call (audited at random) instead of the "
                        "candidate's own kernels: " + refused_in_timed_call +
                            " (kernelbench candidates may use torch only to allocate, view, copy or fill tensors)");
  }
  if (times && !operator_audited.empty() && operator_audited.size() < times->size()) {
    drop_reps(*times, operator_audited);
    obs.isolation["operator_audited_timed_calls"] = operator_audited.size();
  }
  if (times && !snapshotted.empty()) {
    drop_reps(*times, snapshotted);
    obs.isolation["snapshot_audited_timed_calls"] = snapshotted.size();
  }
  if (!times) return make_verdict(common::Status::RUNTIME_ERROR, "failed while timing: " + times.error().message);
  if (cand.in_another_process()) {
    subtract_idle(*times, loaded.idle_call_ms);
    if (auto* runner = dynamic_cast<RunnerCandidate*>(&cand)) {
      obs.isolation["candidate_process"]["outside_calls"] = runner->outside_calls_record();
    }
  }
  obs.phases_ms["timing"] = ms_since(t0);
  auto t_recheck = child_clock::now();
  std::optional<Verdict> closing = defended ? closing_audits(s, loaded, **timer, sets, obs) : std::nullopt;
  obs.phases_ms["recheck"] = ms_since(t_recheck);
  if (closing) return *closing;
  Timings timings;
  timings.runtime = summarize_ms(*times);
  timings.ref_runtime = cached_ref ? *cached_ref : summarize_ms(*ref_times);
  if ((*timer)->measures_cpu_wait()) {
    timings.cpu_wait_fraction = std::max((*timer)->cpu_wait().fraction(), cached_ref ? 0.0 : (*timer)->cpu_wait_b().fraction());
  }
  return timings;
}

}  // namespace kernelrl::eval
