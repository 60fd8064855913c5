#include "eval/time_limits.hpp"

#include <algorithm>

namespace kernelrl::eval {

namespace {
// The closing audits of the timing phase: one call per kept input set (at most two).
constexpr int kClosingAudits = 2;
}  // namespace

int calls_in_phase(const EvalOptions& options, Phase phase) {
  switch (phase) {
    case Phase::CORRECTNESS: return std::max(1, options.n_trials);
    case Phase::TIMING:
    case Phase::REF_TIMING: return std::max(0, options.n_warmup) + std::max(1, options.min_reps) + kClosingAudits;
    case Phase::SETUP:
    case Phase::CALIBRATION:
    case Phase::LOAD: return 0;
  }
  return 0;
}

std::map<std::string, double> scaled_phase_limits_s(const EvalOptions& options, const TaskWork& work) {
  const double unit_s = (std::max(0.0, work.draw_ms) + std::max(0.0, work.eager_ms)) / 1000.0;
  const double multiple = std::max(0.0, options.timeout_eager_multiple);
  std::map<std::string, double> limits;
  for (const auto& spec : kPhases) {
    if (!spec.scaled) continue;
    limits[std::string(spec.name)] = std::max(options.*spec.limit_s, multiple * calls_in_phase(options, spec.phase) * unit_s);
  }
  return limits;
}

}  // namespace kernelrl::eval
