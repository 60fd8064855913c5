// A simpler reward through the same pipeline, for policies too small to write correct kernels yet
// (a documented stand-in, never the default): an Evaluator that does not compile or run the
// candidate but scores how much of the native format's required structure the parsed code has.
// The rollout runner gives an unparsable answer score 0 before any evaluator is asked, so the
// reward is 0 without a fenced code block of the right language, else w_correct + the fraction of
// the markers present: a __global__ kernel, an extern "C" kernelrl_forward entry point, a launch
// (<<<), and the ABI header include. The result says so in its message and in isolation.reward.
#pragma once

#include "rollout/evaluator.hpp"

namespace kernelrl::train {

class FormatRewardEvaluator final : public rollout::Evaluator {
 public:
  // Reads the candidate file; an unreadable one is an Error (naming it).
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override;
  std::string device() const override { return "none (format reward)"; }
};

// The fraction of the markers `code` has (0, 0.25, ..., 1).
double format_marker_fraction(const std::string& code);

}  // namespace kernelrl::train
