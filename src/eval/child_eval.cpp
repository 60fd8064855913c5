#include "eval/child_eval.hpp"

#include <pybind11/pybind11.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <variant>

#include "common/line_io.hpp"
#include "common/report_mac.hpp"
#include "eval/child_context.hpp"
#include "eval/child_phases.hpp"
#include "eval/child_task_confinement.hpp"
#if KERNELRL_EVAL_CUDA_KERNELS
#include "eval/device_check_kernels.hpp"
#endif
#include "eval/gpu.hpp"
#include "eval/phases.hpp"
#include "eval/runner_candidate.hpp"
#include "eval/time_limits.hpp"
#include "sandbox/child_process.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// The child's side of the worker's pipes: announces each phase and waits for the worker's grant
// (it may hold the device lock meanwhile), and sends the final record. The first phase after
// setup carries the limits of the later phases (eval/time_limits.hpp), before any candidate code
// runs; the worker takes the first such line only (sandbox::watch_child).
class Reporter {
 public:
  Reporter(int report_fd, int request_fd, std::string key = {})
      : report_fd_(report_fd), request_fd_(request_fd), key_(std::move(key)) {}
  void phase(Phase phase, const std::map<std::string, double>& limits_s = {}) {
    nlohmann::json line = {{"phase", phase_name(phase)}};
    if (!limits_s.empty()) line["limits_s"] = limits_s;
    write_line(line);
    if (request_fd_ >= 0 && !sandbox::wait_for_grant(request_fd_)) _exit(0);  // the worker is gone
  }
  void final(const ChildRecord& record) { write_line(to_json(record)); }

 private:
  void write_line(const nlohmann::json& j) {
    const std::string raw = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    common::write_all(report_fd_, (key_.empty() ? raw : common::signed_line(key_, n_lines_++, raw)) + "\n");
  }
  int report_fd_, request_fd_;
  std::string key_;            // the worker's key for this evaluation (common/report_mac.hpp)
  std::uint64_t n_lines_ = 0;  // lines written, numbered in their MACs
};

ChildRecord task_error(std::string message) {
  ChildRecord r;
  r.task_error = std::move(message);
  return r;
}

// DEVICE_INFO: whether torch sees a GPU here, and which.
nlohmann::json device_info(const py::module_& torch) {
  nlohmann::json info = {{"cuda_available", false}, {"torch", py::str(torch.attr("__version__")).cast<std::string>()}};
  if (gpu::device_count() > 0 && torch.attr("cuda").attr("is_available")().cast<bool>()) {
    auto facts = gpu::device_facts(0);
    if (facts) {
      info["cuda_available"] = true;
      info["name"] = facts->name;
      info["compute_capability"] =
          std::to_string(facts->compute_capability_major) + std::to_string(facts->compute_capability_minor);
      info["driver_version"] = facts->driver_version;
    }
  }
  return info;
}

// The result as the phases observed it, before any verdict.
EvalResult observed_result(const ChildRequest& req, Observations obs) {
  EvalResult r;
  r.device = req.device;
  r.phases_ms = std::move(obs.phases_ms);
  r.seeds = std::move(obs.seeds);
  r.isolation = std::move(obs.isolation);
  r.tolerance = std::move(obs.tolerance);
  r.device_info = std::move(obs.device_info);
  r.versions = std::move(obs.versions);
  return r;
}

// Whatever the verdict, a candidate in a process of its own leaves in the record what its calls ran
// (isolation.candidate_process.calls, eval/call_evidence.hpp).
struct WriteCallEvidence {
  const LoadedCandidate& loaded;
  Observations& obs;
  ~WriteCallEvidence() {
    const auto* runner = dynamic_cast<const RunnerCandidate*>(loaded.candidate.get());
    if (runner && runner->call_evidence().any_record()) {
      obs.isolation["candidate_process"]["calls"] = runner->call_evidence().to_json();
    }
  }
};

// The last call's record is judged (and counted) like every other's, before a verdict of OK.
void settle_last_call(const LoadedCandidate& loaded) {
  if (auto* runner = dynamic_cast<RunnerCandidate*>(loaded.candidate.get())) {
    if (auto refused = runner->settle_last_record()) throw CandidateRefused{*refused};
  }
}

// Load, correctness and, when asked, timing, in order; the first verdict ends them. Sets
// `candidate_code_ran` the moment the candidate's code first runs in this process, and
// `timings` when timing finished.
std::optional<Verdict> run_phases(const ChildSetup& s, Reporter& rep, Observations& obs, bool& candidate_code_ran,
                                  std::optional<Timings>& timings) {
  rep.phase(Phase::CALIBRATION, scaled_phase_limits_s(s.req.options, s.work));
  obs.isolation["file_size_limit_bytes"] = 64ll << 20;
  auto prepared = prepare_load(s, obs);
  if (auto* verdict = std::get_if<Verdict>(&prepared)) return *verdict;
  LoadedCandidate& loaded = std::get<LoadedCandidate>(prepared);
  calibrate(s, loaded, obs);

  rep.phase(Phase::LOAD);
  auto t_load = child_clock::now();
  candidate_code_ran = true;
  auto not_loaded = load_candidate(s, loaded, obs);
  obs.phases_ms["load"] = ms_since(t_load);
  if (not_loaded) return not_loaded;
  const WriteCallEvidence write_evidence{loaded, obs};
  if (auto verdict = tampered(loaded)) return verdict;

  rep.phase(Phase::CORRECTNESS);
  std::vector<InputSet> sets;
  if (auto verdict = check_correctness(s, loaded, sets, obs)) return verdict;
  if (!s.req.options.time_kernels) {
    settle_last_call(loaded);
    return std::nullopt;
  }

  rep.phase(Phase::TIMING);
  auto timed = time_candidate(s, loaded, sets, obs);
  if (auto* verdict = std::get_if<Verdict>(&timed)) return *verdict;
  timings = std::get<Timings>(timed);
  settle_last_call(loaded);
  return std::nullopt;
}

// The one place that decides an evaluation's verdict: the phases' first verdict, or OK with the
// timings. A failure of the evaluation itself after the candidate's code ran (a CUDA context it
// reset or broke, an interpreter it damaged) is the candidate's RUNTIME_ERROR with a record, never
// "could not evaluate": the task and the device were fine until then (setup ran the reference),
// and the candidate shares this process. Before that, failures stay the task's (rethrown).
EvalResult evaluate(const ChildSetup& s, Reporter& rep, Observations obs) {
  bool candidate_code_ran = false;
  std::optional<Timings> timings;
  std::optional<Verdict> verdict;
  std::optional<std::string> failure;
  try {
    verdict = run_phases(s, rep, obs, candidate_code_ran, timings);
  } catch (const CandidateRefused& e) {
    verdict = make_verdict(common::Status::REJECTED, e.message);
  } catch (const TaskError& e) {
    if (!candidate_code_ran) throw;
    failure = e.message;
  } catch (py::error_already_set& e) {
    if (!candidate_code_ran) throw;
    failure = std::string("a Python error: ") + e.what();
  } catch (const std::exception& e) {
    if (!candidate_code_ran) throw;
    failure = e.what();
  }
  if (failure) {
    verdict = make_verdict(common::Status::RUNTIME_ERROR,
                           "the evaluation failed after the candidate's code ran in its process (a CUDA context it "
                           "reset or broke counts against it): " + failure->substr(0, 600));
    // The evaluator's own allocation found the device full: perhaps another evaluation's candidate
    // holding it (Engine::run_in_worker evaluates again).
    if (s.cuda && says_device_memory_ran_out(*failure)) obs.isolation["device_memory_short"] = true;
  }
  EvalResult r = observed_result(s.req, std::move(obs));
  if (verdict) {
    r.status = verdict->status;
    r.error = std::move(verdict->error);
    r.correct = false;
    r.speedup = 0;
    return r;
  }
  r.status = common::Status::OK;
  r.correct = true;
  if (timings) {
    r.runtime = timings->runtime;
    r.ref_runtime = timings->ref_runtime;
    r.runtime_us = r.runtime.median_us;
    r.ref_runtime_us = r.ref_runtime.median_us;
    if (r.runtime_us > 0) r.speedup = r.ref_runtime_us / r.runtime_us;
    r.cpu_wait_fraction = timings->cpu_wait_fraction;
    r.timing_unstable = r.cpu_wait_fraction > kUnstableCpuWaitFraction;
  }
  return r;
}

}  // namespace

void run_child(const task::TaskModule* task, const ChildRequest& req, int report_fd, int request_fd,
               const ChildStart& start) {
  Reporter rep(report_fd, request_fd, start.report_key);
  try {
    py::module_ torch = py::module_::import("torch");
    if (req.op == ChildOp::DEVICE_INFO) {
      ChildRecord record;
      record.device_info = device_info(torch);
      rep.final(record);
      return;
    }
    Observations obs;
    obs.phases_ms["device_wait"] = start.device_wait_ms;
    if (start.device_prepare_ms > 0) obs.phases_ms["device_prepare"] = start.device_prepare_ms;
    if (start.task_load_ms > 0) obs.phases_ms["task_load"] = start.task_load_ms;
    if (start.task_confined) obs.isolation["task_confinement"] = true;
    rep.phase(Phase::SETUP);
    auto t0 = child_clock::now();
    ChildSetup s = set_up(*task, req, torch, obs);
    obs.phases_ms["setup"] = ms_since(t0);
    ChildRecord record;
    record.signature = s.signature;
    if (req.op == ChildOp::TASK_INFO) {
      rep.phase(Phase::REF_TIMING, scaled_phase_limits_s(req.options, s.work));
      std::optional<TimingSummary> ref_runtime;
      record.health = task_info(s, ref_runtime);
      record.result = observed_result(req, std::move(obs));
      if (ref_runtime) {
        record.result->ref_runtime = *ref_runtime;
        record.result->ref_runtime_us = ref_runtime->median_us;
      }
      rep.final(record);
      return;
    }
    record.result = evaluate(s, rep, std::move(obs));
    // Only a clean evaluation's reference time is kept for later candidates: one measured beside a
    // candidate that broke a rule (a thread burning the CPU, ...) may be inflated.
    if (!req.cached_ref && record.result->ref_runtime.n > 0 && record.result->status == common::Status::OK) {
      record.ref_timing = record.result->ref_runtime;
    }
    rep.final(record);
  } catch (const TaskError& e) {
    rep.final(task_error(e.message));
  } catch (py::error_already_set& e) {
    rep.final(task_error(std::string("unexpected Python error: ") + e.what()));
  } catch (const std::exception& e) {
    rep.final(task_error(std::string("unexpected error: ") + e.what()));
  }
}

void prepare_device(const std::string& device) {
  if (device != "cuda") return;
  try {
    py::module_ torch = py::module_::import("torch");
    if (!torch.attr("cuda").attr("is_available")().cast<bool>()) return;
    py::dict kw;
    kw["device"] = "cuda";
    torch.attr("zeros")(1, **kw);
    torch.attr("cuda").attr("synchronize")();
#if KERNELRL_EVAL_CUDA_KERNELS
    (void)gpu::preload_device_checks();  // a failure shows again, with its message, at the first check
#endif
  } catch (py::error_already_set&) {
    // run_child's setup meets the same failure and reports it
  }
}

void run_child_loading_task(const std::string& task_path, const ChildRequest& request, int report_fd,
                            int request_fd, ChildStart start) {
  if (request.op == ChildOp::DEVICE_INFO) {
    run_child(nullptr, request, report_fd, request_fd, start);
    return;
  }
  if (request.confine_task) {
    // On a GPU the CUDA context is made first: the CUDA driver did not start under these layers
    // (the H100, 2026-12-07), while one started before works on under them (docs/security.md says
    // what that leaves open).
    if (request.device == "cuda") prepare_device(request.device);
    if (auto confined = confine_untrusted_task(task_path, request); !confined) {
      Reporter(report_fd, -1, start.report_key)
          .final(task_error(task_path + ": the task's code is not trusted and this machine cannot confine it: " +
                            confined.error().message));
      return;
    }
    start.task_confined = true;
  }
  const auto t0 = child_clock::now();
  auto task = task::load_task(task_path);
  if (!task) {
    Reporter(report_fd, -1, start.report_key).final(task_error(task.error().message));
    return;
  }
  start.task_load_ms = ms_since(t0);
  run_child(&*task, request, report_fd, request_fd, start);
}

}  // namespace kernelrl::eval
