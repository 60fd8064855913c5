// Turn records regrouped the way the metrics read them: task -> trajectory -> turns by turn index,
// and the two per-trajectory facts everything else is built from (correct, best speedup).
#pragma once

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "trajectory/reader.hpp"

namespace kernelrl::metrics {

// The metrics read trajectory records (trajectory/record.hpp) as they are.
using trajectory::TurnRecord;

struct Trajectory {
  int index = 0;                  // the record's `trajectory`
  std::vector<TurnRecord> turns;  // ascending `turn`
};

struct TaskTrajectories {
  std::string task;                  // path as given in the records (the grouping key)
  std::string task_id;
  std::optional<int> level;          // from the task's first record
  std::optional<std::string> split;  // from the task's first record
  std::vector<Trajectory> trajectories;  // ascending index
};

// Groups records by `task` (tasks in ascending path order), then by `trajectory`.
std::vector<TaskTrajectories> group_by_task(const std::vector<TurnRecord>& records);

// True when any turn with `turn` <= last_turn is correct.
bool any_correct(const Trajectory& trajectory, int last_turn = INT_MAX);

// Max speedup over the correct turns with `turn` <= last_turn; 0 when none is correct. A correct
// turn without a speedup (timing off) counts as 0.
double best_speedup(const Trajectory& trajectory, int last_turn = INT_MAX);

// The largest turn index of any trajectory of the task.
int n_turns(const TaskTrajectories& task);

}  // namespace kernelrl::metrics
