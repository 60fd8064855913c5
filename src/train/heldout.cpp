#include "train/heldout.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "train/episodes.hpp"

namespace kernelrl::train {

using common::make_error;

common::Fallible check(const HeldOutConfig& c) {
  if (!c.enabled() && !c.far_tasks.empty()) {
    return make_error("--heldout-far needs --heldout-split: the far tasks are evaluated with the held-out ones");
  }
  if (!c.enabled()) return common::Ok{};
  if (c.split != "train" && c.split != "test" && c.split != "all") {
    return make_error("--heldout-split '" + c.split + "': expected test, train or all");
  }
  if (c.every < 0) return make_error("--heldout-every must not be negative (got " + std::to_string(c.every) + ")");
  if (c.n_trajectories < 1) return make_error("--heldout-trajectories must be at least 1");
  if (c.n_turns < 1) return make_error("--heldout-turns must be at least 1");
  return common::Ok{};
}

bool heldout_due(const HeldOutConfig& c, int steps_done, int n_steps) {
  if (!c.enabled()) return false;
  return steps_done == 0 || steps_done == n_steps || (c.every > 0 && steps_done % c.every == 0);
}

nlohmann::json heldout_metrics(const std::vector<trajectory::TurnRecord>& records, const std::string& prefix) {
  int answered = 0, correct = 0, turn1 = 0, turn1_correct = 0, degenerate = 0;
  double reward = 0, speedup_sum = 0;
  std::map<std::pair<std::string, int>, double> best;  // (task, trajectory) -> best correct speedup, -1: none
  std::set<std::string> tasks, solved;
  for (const auto& r : records) {
    tasks.insert(r.task);
    auto& b = best.try_emplace({r.task, r.trajectory}, -1.0).first->second;
    if (is_unanswered(r)) continue;
    ++answered;
    reward += r.score;
    degenerate += is_degenerate(r);
    if (r.turn == 1) ++turn1;
    if (!r.correct) continue;
    ++correct;
    turn1_correct += r.turn == 1;
    solved.insert(r.task);
    const double s = r.speedup.value_or(0.0);
    speedup_sum += s;
    b = std::max(b, s);
  }
  int trajectories_correct = 0;
  double best_sum = 0;
  for (const auto& [key, b] : best) {
    trajectories_correct += b >= 0;
    best_sum += std::max(b, 0.0);
  }
  auto frac = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  return {{prefix + "/n_answered", answered},
          {prefix + "/correct_rate", frac(correct, answered)},
          {prefix + "/turn1_correct_rate", frac(turn1_correct, turn1)},
          {prefix + "/trajectory_correct_rate", frac(trajectories_correct, static_cast<double>(best.size()))},
          {prefix + "/tasks_solved_frac", frac(static_cast<double>(solved.size()), static_cast<double>(tasks.size()))},
          {prefix + "/mean_speedup_correct", frac(speedup_sum, correct)},
          {prefix + "/mean_best_speedup", frac(best_sum, static_cast<double>(best.size()))},
          {prefix + "/reward_mean", frac(reward, answered)},
          {prefix + "/degenerate_frac", frac(degenerate, answered)}};
}

}  // namespace kernelrl::train
