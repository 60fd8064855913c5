// Wall-time limits that scale with the task: the correctness and timing phases of an evaluation
// may take a multiple of the work the task itself needs per call (one draw of get_inputs() and one
// eager forward, both measured in setup, before any candidate code runs), and never less than the
// options' fixed floors. A correct kernel is then not a TIMEOUT on a slow machine or a large task,
// and a hang on a small task is still caught at the floor. docs/engine.md, "Time limits".
#pragma once

#include <map>
#include <string>

#include "eval/options.hpp"

namespace kernelrl::eval {

// The task's own work per call, measured by the evaluating child in setup.
struct TaskWork {
  double draw_ms = 0;   // one get_inputs() under a fresh seed, moved to the device
  double eager_ms = 0;  // the reference's first forward on them (start-up costs included: errs long)
};

// Calls each scaled phase makes, in units of TaskWork: correctness runs n_trials trials; timing
// (and ref_timing, the reference alone) n_warmup + min_reps calls and the two closing audits.
int calls_in_phase(const EvalOptions& options, const std::string& phase);

// {"correctness": s, "timing": s, "ref_timing": s}:
// max(floor, timeout_eager_multiple x calls_in_phase x (draw_ms + eager_ms) / 1000).
// The floors are timeout_correctness_s and timeout_timing_s; negative work counts as none.
std::map<std::string, double> scaled_phase_limits_s(const EvalOptions& options, const TaskWork& work);

}  // namespace kernelrl::eval
