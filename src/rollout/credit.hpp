// Credit for a task's finished turns: returns along each trajectory (rl::returns), advantages over
// the task's group (rl::advantages), and the beam search's choice of which trajectories go on.
#pragma once

#include <optional>
#include <vector>

#include "rl/rewards.hpp"
#include "rollout/turn_record.hpp"

namespace kernelrl::rollout {

// Scores and lineage of a task's turns, indexed [trajectory][turn - 1]; every trajectory has
// the same number of turns. `from` is the turn each one continues: none for turn 1, else a turn
// of the previous round ((j, t - 1) without branching; the beam's parent with it).
struct TaskTurns {
  std::vector<std::vector<double>> scores;
  std::vector<std::vector<std::optional<TurnRef>>> from;
  // [trajectory][turn - 1]: the policy was never asked, because the prompt did not fit its
  // context; such a turn is not the model's outcome. Empty: every turn was answered.
  std::vector<std::vector<bool>> unanswered;
};

struct TaskCredit {
  std::vector<std::vector<std::optional<double>>> returns;     // [trajectory][turn - 1]; none when unanswered
  std::vector<std::vector<std::optional<double>>> advantages;  // same shape
};

// Each root-to-leaf path through the lineage is one trajectory for rl::returns; a turn's return is
// the mean over the paths through it. Without branching every turn lies on one path, so this is
// rl::returns of its trajectory exactly. Advantages: rl::advantages over [trajectory][turn].
// Unanswered turns are left out of the paths' scores and of the advantage groups, and get neither.
TaskCredit assign_credit(const TaskTurns& turns, const rl::ReturnConfig& returns, const rl::AdvantageConfig& advantage);

// Beam search: the `beam_width` trajectories kept after a round, best score first (ties to the
// lower index).
std::vector<int> select_beam(const std::vector<double>& scores, int beam_width);

// Beam search: the trajectory whose turn trajectory `j` of the next round continues; each kept
// trajectory is branched into n_trajectories / kept.size() consecutive copies.
int beam_parent(const std::vector<int>& kept, int n_trajectories, int j);

}  // namespace kernelrl::rollout
