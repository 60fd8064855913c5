#include "credit_options.hpp"

#include "rl/rewards.hpp"

namespace kernelrl::cli {

void add_credit_options(CLI::App* cmd, rollout::RolloutConfig& c, CreditArgs& args) {
  cmd->add_option("--w-correct", c.score.w_correct, "score of a correct kernel on top of its speedup")->capture_default_str();
  cmd->add_option("--gamma", c.returns.gamma, "discount per later turn in a turn's return")->capture_default_str();
  cmd->add_option("--return", args.return_kind, "sum or max of discounted later scores")
      ->check(CLI::IsMember({"sum", "max"}))->capture_default_str();
  cmd->add_option("--advantage", args.advantage_kind, "advantage normalisation")
      ->check(CLI::IsMember({"grpo_task", "grpo_per_turn", "leave_one_out_turn"}))->capture_default_str();
  cmd->add_option("--advantage-std", args.advantage_std,
                  "GRPO advantages: divide by the group's standard deviation (off: Dr. GRPO, mean subtraction only)")
      ->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  cmd->add_option("--speedup-cap", args.speedup_cap, "clip the score's speedup term at this value (0: no cap)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
}

void apply_credit_options(const CreditArgs& args, rollout::RolloutConfig& c) {
  c.returns.kind = args.return_kind == "max" ? rl::ReturnKind::DISCOUNTED_MAX : rl::ReturnKind::DISCOUNTED_SUM;
  c.advantage.kind = *rl::parse_advantage_kind(args.advantage_kind);
  c.advantage.divide_by_std = args.advantage_std == "on";
  if (args.speedup_cap > 0) c.score.speedup_cap = args.speedup_cap;
}

}  // namespace kernelrl::cli
