// How one evaluation is run: trials, tolerances, timing and the wall-time limit of each phase.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kernelrl::eval {

// The torch dtype (its attribute name) of a precision EvalOptions::precision may name, as
// KernelBench's --precision spells them: fp32, fp16, bf16; nullopt for any other name.
inline std::optional<std::string> precision_torch_dtype(const std::string& precision) {
  if (precision == "fp32") return "float32";
  if (precision == "fp16") return "float16";
  if (precision == "bf16") return "bfloat16";
  return std::nullopt;
}

// Where a format's candidates run: in the evaluating child, in a process of their own when the
// evaluation is on a GPU, or in a process of their own on any device. In JSON: "never", "gpu",
// "always" (true and false read as "always" and "never").
enum class CandidateProcess { NEVER, ON_GPU, ALWAYS };

inline void to_json(nlohmann::json& j, const CandidateProcess& p) {
  j = p == CandidateProcess::NEVER ? "never" : p == CandidateProcess::ON_GPU ? "gpu" : "always";
}

// Throws std::invalid_argument naming the value when it is none of those.
inline void from_json(const nlohmann::json& j, CandidateProcess& p) {
  if (j.is_boolean()) {
    p = j.get<bool>() ? CandidateProcess::ALWAYS : CandidateProcess::NEVER;
  } else if (j == "never") {
    p = CandidateProcess::NEVER;
  } else if (j == "gpu") {
    p = CandidateProcess::ON_GPU;
  } else if (j == "always") {
    p = CandidateProcess::ALWAYS;
  } else {
    throw std::invalid_argument("candidate process: " + j.dump() + " is not one of \"never\", \"gpu\", \"always\"");
  }
}

struct EvalOptions {
  std::string device = "auto";     // "auto" (cuda when a GPU is usable, else cpu), "cuda" or "cpu"
  int n_trials = 5;                // correctness trials, each on fresh inputs from an unpredictable seed
  double atol = -1;                // absolute tolerance for float outputs; < 0 = the rules' per-dtype
                                   // default (checker.hpp)
  double rtol = -1;                // relative tolerance for float outputs; < 0 = per-dtype default
  bool time_kernels = true;        // false: correctness only (runtime and speedup stay 0)
  int n_warmup = 5;                // untimed calls before timing
  int min_reps = 10;               // timed calls at least
  int max_reps = 100;              // timed calls at most
  double timing_budget_ms = 1000;  // stop adding timed calls once this much time was measured (after min_reps)
  bool flush_l2 = true;            // flush L2 (or the CPU's last-level cache) before every timed call
  bool allow_tf32 = false;         // TF32 for the reference's matmuls and convolutions
  std::string precision;           // kernelbench: "fp32", "fp16" or "bf16" (precision_torch_dtype)
                                   // casts both models and the floating-point inputs, as KernelBench's
                                   // --precision; "" runs the task at its own dtypes
  bool torch_op_audit = true;      // kernelbench: a trial whose ModelNew call runs PyTorch operators
                                   // beyond allocating, viewing, copying and filling is REJECTED
                                   // (eval/op_audit.hpp)
  double max_held_device_mb = 0;   // device memory a trial's call may keep after returning (eval/held_memory.hpp);
                                   // 0 = a quarter of the device's
  double timeout_setup_s = 120;    // child start, reference model build, signature run
  double timeout_load_s = 60;      // loading the candidate (dlopen / import of a kernelbench module)
  // The correctness and timing phases' limits scale with the task (eval/time_limits.hpp): each is
  // timeout_eager_multiple x its calls x the task's own work per call (one draw of get_inputs()
  // plus one eager forward, measured in setup), and never shorter than its floor below.
  double timeout_correctness_s = 30;  // floor: all correctness trials together
  double timeout_timing_s = 120;   // floor: warm-up and timed calls of candidate and reference
  double timeout_eager_multiple = 10;  // phase limit per call, in units of the task's draw + eager forward
  // false ONLY to measure what the defenses cost (bench/engine_bench.cpp): the child runs without
  // its syscall filter, write confinement and memory limit, inputs are not checked unchanged nor
  // outputs poisoned, timed calls get no fresh inputs and no recheck, no roofline re-measure.
  // Results of such a run can be fooled by every hack in tests/adversarial/.
  bool defenses = true;
  // Host candidates run in a process of their own (eval/host_runner.hpp): the checker, the
  // reference and the report stay in the evaluating child. false (or defenses false) runs them in
  // the child itself; for measuring what the separation costs.
  bool separate_process = true;
  // Native candidates on a GPU run in a process of their own too (eval/device_runner.hpp: their own
  // CUDA context, the call's tensors in a device arena mapped through CUDA IPC, calls timed on the
  // host clock from the child, less an idle call's), with every defense on: the reference, the
  // checker and the report stay where the candidate's code never runs. Its timing equals the child's
  // on the H200 (docs/security.md). false runs them in the evaluating child, for measuring what the
  // separation costs (about a third of a cached batch's throughput).
  bool native_candidate_process = true;
  // kernelbench candidates run in a process of their own (eval/kernelbench_runner.hpp: their own
  // interpreter and, on a GPU, CUDA context; ModelNew's outputs copied into slots the child reads),
  // with every defense on: the reference, the checker and the tamper guard's interpreter never see
  // the candidate's code. "never" (--kernelbench-in-child) runs them in the evaluating child, for
  // measuring what the separation costs; "gpu" apart on a GPU only (the default before the
  // twenty-third session).
  CandidateProcess kernelbench_candidate_process = CandidateProcess::ALWAYS;
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EvalOptions, device, n_trials, atol, rtol, time_kernels, n_warmup,
                                                min_reps, max_reps, timing_budget_ms, flush_l2, allow_tf32, precision, torch_op_audit,
                                                max_held_device_mb, timeout_setup_s, timeout_load_s, timeout_correctness_s,
                                                timeout_timing_s, timeout_eager_multiple, defenses, separate_process,
                                                native_candidate_process, kernelbench_candidate_process)

}  // namespace kernelrl::eval
