#include "eval/time_limits.hpp"

#include <algorithm>

namespace kernelrl::eval {

namespace {
// The closing audits of the timing phase: one call per kept input set (at most two).
constexpr int kClosingAudits = 2;
}  // namespace

int calls_in_phase(const EvalOptions& options, const std::string& phase) {
  if (phase == "correctness") return std::max(1, options.n_trials);
  return std::max(0, options.n_warmup) + std::max(1, options.min_reps) + kClosingAudits;
}

std::map<std::string, double> scaled_phase_limits_s(const EvalOptions& options, const TaskWork& work) {
  const double unit_s = (std::max(0.0, work.draw_ms) + std::max(0.0, work.eager_ms)) / 1000.0;
  const double multiple = std::max(0.0, options.timeout_eager_multiple);
  auto scaled = [&](const std::string& phase, double floor_s) {
    return std::max(floor_s, multiple * calls_in_phase(options, phase) * unit_s);
  };
  return {{"correctness", scaled("correctness", options.timeout_correctness_s)},
          {"timing", scaled("timing", options.timeout_timing_s)},
          {"ref_timing", scaled("ref_timing", options.timeout_timing_s)}};
}

}  // namespace kernelrl::eval
