// The phases of an evaluating child, in one table: the name the child announces on its report
// channel ({"phase": NAME}, sandbox::watch_child), the wall-time limit the worker enforces, and the
// device lock the worker holds meanwhile. The child (child_eval.cpp) announces them, the worker
// (worker.cpp) limits them and locks the device for them, time_limits.cpp scales their limits,
// and the engine (engine.cpp) reads the last one of a child that ended without a record.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "eval/options.hpp"
#include "sandbox/device_lock.hpp"

namespace kernelrl::eval {

// In the order an "eval" child enters them; a "task_info" child runs SETUP then REF_TIMING.
// CALIBRATION hands the candidate's process its evaluation and times idle calls of it before any
// candidate code is loaded (eval/candidate_process.hpp), alone on the device as timed calls are.
enum class Phase { SETUP, CALIBRATION, LOAD, CORRECTNESS, TIMING, REF_TIMING };

struct PhaseSpec {
  Phase phase;
  std::string_view name;          // on the wire and the key of EvalResult::phases_ms
  double EvalOptions::*limit_s;   // its fixed wall-time limit, in seconds (the floor of a scaled one)
  bool scaled;                    // the limit grows with the task's work per call (eval/time_limits.hpp)
  sandbox::DeviceLock::Mode lock; // shared: other children's setup and checks may overlap it;
                                  // exclusive: timed, no other evaluation's kernels run meanwhile
};

// Calibration, timing and ref_timing hold the device alone. The closing audits after timing (phases_ms
// "recheck") run inside the timing phase, so they are timed alone too and counted in its limit.
inline constexpr std::array<PhaseSpec, 6> kPhases{{
    {Phase::SETUP, "setup", &EvalOptions::timeout_setup_s, false, sandbox::DeviceLock::Mode::SHARED},
    {Phase::CALIBRATION, "calibration", &EvalOptions::timeout_load_s, false, sandbox::DeviceLock::Mode::EXCLUSIVE},
    {Phase::LOAD, "load", &EvalOptions::timeout_load_s, false, sandbox::DeviceLock::Mode::SHARED},
    {Phase::CORRECTNESS, "correctness", &EvalOptions::timeout_correctness_s, true, sandbox::DeviceLock::Mode::SHARED},
    {Phase::TIMING, "timing", &EvalOptions::timeout_timing_s, true, sandbox::DeviceLock::Mode::EXCLUSIVE},
    {Phase::REF_TIMING, "ref_timing", &EvalOptions::timeout_timing_s, true, sandbox::DeviceLock::Mode::EXCLUSIVE},
}};

const PhaseSpec& spec_of(Phase phase);
std::string phase_name(Phase phase);

// The phase a name on the wire stands for; nullopt for any other name (sandbox::kStartPhase, ...).
std::optional<Phase> parse_phase(std::string_view name);

// {NAME: limit_s} of every phase, at the options' fixed limits (the worker's, before the child
// announces its scaled ones).
std::map<std::string, double> fixed_phase_limits_s(const EvalOptions& options);

// The device lock mode for a child that announced `name` while the worker holds `current`: the
// phase's own (the calibration's exclusive hold ends with it), `current` for a name not in the table.
sandbox::DeviceLock::Mode lock_mode_for(std::string_view name, sandbox::DeviceLock::Mode current);

// False while no candidate code has run anywhere: before any phase line (sandbox's kStartPhase),
// in setup and in calibration (the candidate's process exists but has loaded nothing). A child
// that ends without a record after that is the candidate's.
bool candidate_code_may_have_run(std::string_view last_phase);

}  // namespace kernelrl::eval
