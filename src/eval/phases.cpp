#include "eval/phases.hpp"

#include "sandbox/child_process.hpp"

namespace kernelrl::eval {

const PhaseSpec& spec_of(Phase phase) { return kPhases[static_cast<std::size_t>(phase)]; }

std::string phase_name(Phase phase) { return std::string(spec_of(phase).name); }

std::optional<Phase> parse_phase(std::string_view name) {
  for (const auto& spec : kPhases) {
    if (spec.name == name) return spec.phase;
  }
  return std::nullopt;
}

std::map<std::string, double> fixed_phase_limits_s(const EvalOptions& options) {
  std::map<std::string, double> limits;
  for (const auto& spec : kPhases) limits[std::string(spec.name)] = options.*spec.limit_s;
  return limits;
}

sandbox::DeviceLock::Mode lock_mode_for(std::string_view name, sandbox::DeviceLock::Mode current) {
  const auto phase = parse_phase(name);
  return phase ? spec_of(*phase).lock : current;
}

bool candidate_code_may_have_run(std::string_view last_phase) {
  const auto phase = parse_phase(last_phase);
  return last_phase != sandbox::kStartPhase && phase != Phase::SETUP && phase != Phase::CALIBRATION;
}

}  // namespace kernelrl::eval
