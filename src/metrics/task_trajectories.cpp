// group_by_task: ordered maps give a deterministic order whatever order turns finished in.
#include "metrics/task_trajectories.hpp"

#include <algorithm>
#include <map>

namespace kernelrl::metrics {

std::vector<TaskTrajectories> group_by_task(const std::vector<TurnRecord>& records) {
  std::map<std::string, TaskTrajectories> tasks;
  std::map<std::string, std::map<int, Trajectory>> trajectories_of;  // task -> index -> turns
  for (const auto& r : records) {
    auto [it, inserted] = tasks.try_emplace(r.task);
    if (inserted) it->second = TaskTrajectories{r.task, r.task_id, r.level, r.split, {}};
    Trajectory& t = trajectories_of[r.task][r.trajectory];
    t.index = r.trajectory;
    t.turns.push_back(r);
  }
  std::vector<TaskTrajectories> grouped;
  for (auto& [task, info] : tasks) {
    for (auto& [index, trajectory] : trajectories_of[task]) {
      std::sort(trajectory.turns.begin(), trajectory.turns.end(),
                [](const TurnRecord& a, const TurnRecord& b) { return a.turn < b.turn; });
      info.trajectories.push_back(std::move(trajectory));
    }
    grouped.push_back(std::move(info));
  }
  return grouped;
}

bool any_correct(const Trajectory& trajectory, int last_turn) {
  return std::any_of(trajectory.turns.begin(), trajectory.turns.end(),
                     [&](const TurnRecord& r) { return r.turn <= last_turn && r.correct; });
}

double best_speedup(const Trajectory& trajectory, int last_turn) {
  double best = 0.0;
  for (const auto& r : trajectory.turns) {
    if (r.turn <= last_turn && r.correct) best = std::max(best, r.speedup.value_or(0.0));
  }
  return best;
}

int n_turns(const TaskTrajectories& task) {
  int n = 0;
  for (const auto& t : task.trajectories) {
    for (const auto& r : t.turns) n = std::max(n, r.turn);
  }
  return n;
}

}  // namespace kernelrl::metrics
