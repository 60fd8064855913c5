// The load phase of an evaluating child (child_phases.hpp): what watches a kernelbench candidate
// is set up first, then the process restricts itself and the candidate is loaded, its code
// filtered from its first instruction (a native or host library's constructors, a kernelbench
// module's top-level code; its extensions were built by the prebuild, load_inline only loads them).
#include <pybind11/pybind11.h>

#include "eval/child_phases.hpp"
#include "eval/device_runner.hpp"
#include "eval/host_runner.hpp"
#include "eval/kernelbench_runner.hpp"
#include "eval/runner_ahead.hpp"
#include "sandbox/candidate_confinement.hpp"
#include "sandbox/confinement.hpp"

namespace kernelrl::eval {

namespace {

constexpr std::uint64_t kHostMemoryHeadroomBytes = 8ull << 30;

// From here on the process runs candidate code: no new processes, exec or network
// (sandbox/syscall_filter.hpp), no writes outside scratch (sandbox/write_confinement.hpp).
// Recorded in the result either way.
// Writes are confined to the child's scratch folder (its cwd) and /dev (GPU device files), plus
// CUDA's own JIT cache when it exists.
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

// Host candidates run in a process of their own (eval/host_runner.hpp), forked before this one
// restricts itself; native ones on a GPU too when the options ask (eval/device_runner.hpp); the
// others (kernelbench: Python) run here.
bool in_separate_process(const ChildSetup& s) {
  return s.req.format == common::Format::HOST && s.req.options.defenses && s.req.options.separate_process;
}

// kernelbench candidates run in a process of their own when the options ask
// (eval/kernelbench_runner.hpp), on the CPU or a GPU.
bool in_kernelbench_runner(const ChildSetup& s) { return runner_kind(s.req) == RunnerKind::KERNELBENCH; }

bool wants_op_audit(const ChildSetup& s) {
  return s.req.options.torch_op_audit && s.req.rules == common::RuleSet::STRICT;
}

bool in_device_runner(const ChildSetup& s) { return runner_kind(s.req) == RunnerKind::NATIVE; }

LoadOutcome load(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs) {
  const bool kernelbench = s.req.format == common::Format::KERNELBENCH;
  if (kernelbench && !in_kernelbench_runner(s)) {
    restrict_system_calls(s, obs);
    return load_kernelbench(s.req.artifact, s.req.candidate, s.init_inputs, s.device, s.init_seed);
  }
  if (!kernelbench && !in_device_runner(s) && !in_separate_process(s)) {
    restrict_system_calls(s, obs);
    return load_shared_object(s.req.artifact, s.params);
  }
  RunnerOptions options;
  // Room for one call's tensors twice over: get_inputs() may draw sizes that vary a little.
  options.tensor_bytes = 2 * s.call_tensor_bytes + (1u << 20);
  options.flush_caches = s.req.options.flush_l2;
  RunnerStart runner;
  if (kernelbench) {
    KernelbenchRunnerStart started = start_kernelbench_runner(s, options, wants_op_audit(s));
    runner = std::move(started.runner);
    if (wants_op_audit(s)) {
      obs.isolation["torch_op_audit"] = static_cast<bool>(started.op_audit);
      if (runner.isolation.contains("torch_op_audit_error")) {
        obs.isolation["torch_op_audit_error"] = runner.isolation["torch_op_audit_error"];
      }
    }
    loaded.op_audit = std::move(started.op_audit);
  } else if (in_device_runner(s)) {
    runner = start_device_runner(s.req.artifact, s.params, options);
  } else {
    runner = start_host_runner(s.req.artifact, s.params, options, [] { return confine_process(false); });
  }
  restrict_system_calls(s, obs);
  obs.isolation["candidate_process"] = runner.isolation;
  obs.isolation["candidate_process"]["separate"] = true;
  return std::move(runner.loaded);
}

}  // namespace

std::variant<LoadedCandidate, Verdict> prepare_load(const ChildSetup& s, Observations& obs) {
  LoadedCandidate loaded;
  if (s.req.format != common::Format::KERNELBENCH) return loaded;
  // The guard watches this interpreter, where the reference and the checker run; with the candidate
  // in a process of its own it stays as a check that nothing came in (its loaders and audit are there).
  if (!in_kernelbench_runner(s)) {
    if (auto prepared = prepare_kernelbench_loading(); !prepared) {
      return make_verdict(common::Status::RUNTIME_ERROR, prepared.error().message);
    }
  }
  settle_torch_lazy_state();  // done by the worker already, unless this child was forked before
  loaded.guard.emplace(s.task.module, s.task.model_class);
  obs.isolation["tamper_guard"] = true;
  // KernelBench's acceptance lets PyTorch operators do part of the work; the strict rules do not.
  if (wants_op_audit(s) && !in_kernelbench_runner(s)) {
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

std::optional<Verdict> load_candidate(const ChildSetup& s, LoadedCandidate& loaded, Observations& obs) {
  LoadOutcome outcome = load(s, loaded, obs);
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
