// The calibration and load phases of an evaluating child (child_phases.hpp): what watches a
// kernelbench candidate is set up first, the candidate's process is handed its evaluation and its
// clock calibrated (no candidate code has run anywhere yet), then this process restricts itself and
// the candidate is loaded: in its own process (eval/candidate_process.hpp), or here in the
// baselines that measure what the separation costs (--native-in-child, --kernelbench-in-child,
// defenses off), its code filtered from its first instruction.
#include <pybind11/pybind11.h>

#include "eval/candidate_process.hpp"
#include "eval/child_phases.hpp"
#include "eval/runner_process.hpp"
#include "sandbox/candidate_confinement.hpp"
#include "sandbox/confinement.hpp"

namespace kernelrl::eval {

namespace {

constexpr std::uint64_t kHostMemoryHeadroomBytes = 8ull << 30;

// This process's own layers (sandbox/candidate_confinement.hpp): where the candidate runs here
// (the baselines), the defense; where it runs apart, a second wall around the reference, the
// checker and the report. Recorded in the result either way.
nlohmann::json confine_process(bool cuda) {
  nlohmann::json isolation = sandbox::confine_candidate_process();
  // Host memory: on the CPU the address space may grow by kHostMemoryHeadroomBytes past what
  // setup needed. Not on a GPU: the CUDA driver reserves far more address space than it uses.
  if (!cuda) {
    auto limit = sandbox::limit_address_space_growth(kHostMemoryHeadroomBytes);
    if (limit) isolation["address_space_limit_bytes"] = *limit;
  }
  return isolation;
}

void restrict_system_calls(const ChildSetup& s, Observations& obs) {
  obs.isolation["defenses"] = s.req.options.defenses;
  if (!s.req.options.defenses) return;
  obs.isolation.update(confine_process(s.cuda));
}

bool wants_op_audit(const ChildSetup& s) {
  return s.req.options.torch_op_audit && s.req.rules == common::RuleSet::STRICT;
}

}  // namespace

std::variant<LoadedCandidate, Verdict> prepare_load(const ChildSetup& s, Observations& obs) {
  LoadedCandidate loaded;
  if (s.req.format != common::Format::KERNELBENCH) return loaded;
  const bool here = runner_kind(s.req) == RunnerKind::NONE;
  // The guard watches this interpreter, where the reference and the checker run; with the candidate
  // in a process of its own it stays as a check that nothing of the candidate's came in.
  if (here) {
    if (auto prepared = prepare_kernelbench_loading(); !prepared) {
      return make_verdict(common::Status::RUNTIME_ERROR, prepared.error().message);
    }
    settle_torch_lazy_state();  // done by the worker already, unless this child was forked before
  }
  loaded.guard.emplace(s.task.module, s.task.model_class);
  obs.isolation["tamper_guard"] = true;
  // KernelBench's acceptance lets PyTorch operators do part of the work; the strict rules do not.
  // Apart, the candidate's process records its operators below Python (audit/call_recorder.hpp).
  if (here && wants_op_audit(s)) {
    auto audit = TorchOpAudit::create();
    obs.isolation["torch_op_audit"] = static_cast<bool>(audit);
    if (audit) {
      loaded.op_audit = std::make_unique<TorchOpAudit>(std::move(*audit));
    } else {
      obs.isolation["torch_op_audit_error"] = audit.error().message;
    }
  }
  return loaded;
}

void calibrate(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs) {
  loaded.runner = start_candidate_process(s, obs);
  if (!loaded.runner || !s.req.options.time_kernels) return;
  calibrate_idle_calls(s, *loaded.runner, obs);
  loaded.idle_call_ms = loaded.runner->idle_call_ms();
}

std::optional<Verdict> load_candidate(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs) {
  restrict_system_calls(s, obs);
  LoadOutcome outcome;
  if (loaded.runner) {
    outcome = load_in_candidate_process(s, std::move(loaded.runner));
  } else if (s.req.format == common::Format::KERNELBENCH) {
    outcome = load_kernelbench(s.req.artifact, s.req.candidate, s.init_inputs, s.device, s.precision, s.init_seed);
  } else {
    outcome = load_shared_object(s.req.artifact, s.params);
  }
  if (!outcome.candidate) return make_verdict(outcome.status, outcome.error);
  loaded.candidate = std::move(outcome.candidate);
  return std::nullopt;
}

std::optional<Verdict> tampered(const LoadedCandidate& loaded) {
  if (!loaded.guard) return std::nullopt;
  const std::string change = loaded.guard->first_change();
  if (change.empty()) return std::nullopt;
  return make_verdict(common::Status::REJECTED,
                      "the candidate changed the interpreter it shares with the reference and the checker: " + change +
                          " (kernelbench modules may not patch torch, the task or global settings)");
}

}  // namespace kernelrl::eval
