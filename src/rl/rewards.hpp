// Multi-turn credit assignment for kernel RL (DESIGN.md, "The recipe"): the score of one kernel,
// the return of each turn, and the advantage of each turn within its task's group. Pure functions,
// no state; names follow the papers (gamma, w_correct, advantage).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::rl {

struct ScoreConfig {
  double w_correct = 0.3;                 // reward for being correct at all (Kevin: 0.3)
  std::optional<double> speedup_cap;      // clip the speedup term at this value (none by default)
};

// s = w_correct * correct + speedup * correct; an incorrect or rejected kernel scores 0.
double score(bool correct, double speedup, const ScoreConfig& config = {});

enum class ReturnKind {
  DISCOUNTED_SUM,  // R_t = sum_{i>=t} gamma^(i-t) s_i   (default)
  DISCOUNTED_MAX,  // R_t = max_{i>=t} gamma^(i-t) s_i
};

struct ReturnConfig {
  ReturnKind kind = ReturnKind::DISCOUNTED_SUM;
  double gamma = 0.4;  // discount per later turn (Kevin: 0.4)
};

// Returns of every turn of one trajectory, from its per-turn scores.
std::vector<double> returns(const std::vector<double>& scores, const ReturnConfig& config = {});

enum class AdvantageKind {
  GRPO_TASK,          // (R - mean) / std over all m*n samples of a task (default, Kevin)
  GRPO_PER_TURN,      // the same, within each turn index across the task's m trajectories
  LEAVE_ONE_OUT_TURN, // R - mean of the other trajectories' returns at the same turn (Dr. Kernel)
};

struct AdvantageConfig {
  AdvantageKind kind = AdvantageKind::GRPO_TASK;
  bool divide_by_std = true;  // GRPO kinds: false keeps only the mean subtraction (Dr. GRPO)
  double eps = 1e-6;          // added to the standard deviation (sample std, n - 1)
};

// Advantages of every turn of every trajectory of one task, shaped like `returns_by_trajectory`
// (trajectories may have different numbers of turns). A group of one sample gets advantage 0.
std::vector<std::vector<double>> advantages(const std::vector<std::vector<double>>& returns_by_trajectory,
                                            const AdvantageConfig& config = {});

// The same where some turns have no return (the policy was never asked: its prompt did not fit):
// those are in no group and get no advantage; the groups are formed from the others alone.
std::vector<std::vector<std::optional<double>>> advantages_where_present(
    const std::vector<std::vector<std::optional<double>>>& returns_by_trajectory, const AdvantageConfig& config = {});

std::string to_string(ReturnKind kind);        // "discounted_sum", "discounted_max"
std::string to_string(AdvantageKind kind);     // "grpo_task", "grpo_per_turn", "leave_one_out_turn"
common::Expected<ReturnKind> parse_return_kind(const std::string& name);
common::Expected<AdvantageKind> parse_advantage_kind(const std::string& name);

}  // namespace kernelrl::rl
