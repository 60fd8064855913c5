// The score, return and advantage options that `rollout` and `train` share (src/rl: what a turn
// scores, how later turns' scores come back to it, how advantages are normalised).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "rollout/rollout_config.hpp"

namespace kernelrl::cli {

struct CreditArgs {
  std::string return_kind = "sum", advantage_kind = "grpo_task", advantage_std = "on";
  double speedup_cap = 0;  // 0: none
};

// --w-correct and --gamma (straight into `config`), --return, --advantage, --advantage-std,
// --speedup-cap (into `args`, for apply_credit_options once parsed).
void add_credit_options(CLI::App* cmd, rollout::RolloutConfig& config, CreditArgs& args);

// The parsed `args` into `config` (the option checks allow only valid names).
void apply_credit_options(const CreditArgs& args, rollout::RolloutConfig& config);

}  // namespace kernelrl::cli
