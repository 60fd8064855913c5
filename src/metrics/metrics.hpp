// Evaluation metrics of a rollout (issue 5; definitions in docs/report.md): per task, then averaged
// over tasks per level, per split and overall. Correctness, pass@k and best@k speedup (the
// published avg@k, the mean over trajectories, is best@1 here: there is no separate avg@k),
// fast_p, geometric-mean speedup, and the serial (by turn) and parallel (by k) scaling curves.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "metrics/task_trajectories.hpp"

namespace kernelrl::metrics {

struct MetricsConfig {
  std::vector<int> ks = {1, 2, 4, 8, 16};                 // k of pass@k and best@k (kept when <= n)
  std::vector<double> fast_p_thresholds = {0, 1, 1.5, 2};  // p of fast_p: speedup must exceed p
};

struct KValue {
  int k = 1;
  double value = 0;
};

struct FastP {
  double p = 0;        // speedup threshold (strictly greater)
  double at_best = 0;  // tasks whose best over all trajectories is correct with speedup > p
  double at_1 = 0;     // expected over one random trajectory: correct with best speedup > p
};

// Serial scaling: what the trajectories reached using only their turns 1..turn.
struct TurnPoint {
  int turn = 1;
  double correctness = 0;        // fraction of trajectories with a correct turn so far
  double mean_best_speedup = 0;  // mean over trajectories of the best speedup so far (0 if none)
};

struct TaskMetrics {
  std::string task;  // path as given
  std::string task_id;
  std::optional<int> level;
  std::optional<std::string> split;
  int n_trajectories = 0;
  int n_correct_trajectories = 0;  // with any correct turn
  int n_turns = 0;                 // largest turn index
  double correctness = 0;          // n_correct_trajectories / n_trajectories
  std::vector<KValue> pass_at_k;   // k in config.ks with k <= n_trajectories
  std::vector<KValue> best_at_k;   // same k
  double best_speedup = 0;         // max over all trajectories and turns; 0 when none correct
  std::vector<FastP> fast_p;       // at_best is 0 or 1 for one task
  std::vector<TurnPoint> by_turn;  // turn 1..n_turns
};

// Task metrics averaged over the tasks of a group, each task weighing the same.
struct GroupMetrics {
  std::string name;  // "overall", "level 1", "level none", "split train", ...
  int n_tasks = 0;
  int n_trajectories = 0;
  double correctness = 0;         // mean task correctness
  double solved_rate = 0;         // fraction of tasks with any correct trajectory
  std::vector<KValue> pass_at_k;  // k <= every task's n_trajectories
  std::vector<KValue> best_at_k;  // same k
  double mean_best_speedup = 0;   // mean task best speedup (incorrect tasks count 0)
  std::vector<FastP> fast_p;
  std::optional<double> geomean_speedup;  // over tasks with a correct turn and best speedup > 0
  int n_geomean_tasks = 0;                // how many tasks that geometric mean covers
  std::vector<TurnPoint> by_turn;         // turn 1..largest; a shorter task keeps its last value
};

struct Report {
  std::string source;  // the trajectories file read
  std::vector<TaskMetrics> tasks;
  GroupMetrics overall;
  std::vector<GroupMetrics> by_level;  // ascending level, "level none" last
  std::vector<GroupMetrics> by_split;  // ascending name, "split none" last
  std::vector<std::string> warnings;   // from reading the file
  std::vector<TurnRecord> turns;       // every turn read, for the HTML drill-down
};

TaskMetrics task_metrics(const TaskTrajectories& task, const MetricsConfig& config = {});

// Averages `tasks` (at least one) into a group called `name`.
GroupMetrics group_metrics(const std::string& name, const std::vector<const TaskMetrics*>& tasks,
                           const MetricsConfig& config = {});

// Every task, level, split and the overall group. Requires at least one record.
Report compute_report(const std::vector<TurnRecord>& records, const MetricsConfig& config = {});

// Reads a run directory (its trajectories.jsonl) or a trajectories file and computes its report.
// Fails naming the file when it is unreadable, malformed or holds no turn records.
common::Expected<Report> report_from_run(const std::filesystem::path& run_dir_or_jsonl,
                                         const MetricsConfig& config = {});

}  // namespace kernelrl::metrics
