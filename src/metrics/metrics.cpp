// Metrics: one pass per task over its trajectory-level facts, then plain means over tasks.
#include "metrics/metrics.hpp"

#include <algorithm>
#include <cassert>
#include <climits>
#include <map>

#include "metrics/estimators.hpp"

namespace kernelrl::metrics {

namespace {

std::vector<FastP> task_fast_p(const std::vector<bool>& correct, const std::vector<double>& best,
                               double task_best, bool task_correct, const MetricsConfig& config) {
  std::vector<FastP> fast;
  for (double p : config.fast_p_thresholds) {
    std::vector<double> hit;  // one trajectory: correct and faster than p
    for (std::size_t i = 0; i < best.size(); ++i) hit.push_back(correct[i] && best[i] > p ? 1.0 : 0.0);
    fast.push_back({p, task_correct && task_best > p ? 1.0 : 0.0, mean(hit)});
  }
  return fast;
}

std::vector<TurnPoint> task_by_turn(const TaskTrajectories& task, int last_turn) {
  std::vector<TurnPoint> points;
  for (int t = 1; t <= last_turn; ++t) {
    std::vector<double> correct_so_far, best_so_far;
    for (const auto& trajectory : task.trajectories) {
      correct_so_far.push_back(any_correct(trajectory, t) ? 1.0 : 0.0);
      best_so_far.push_back(best_speedup(trajectory, t));
    }
    points.push_back({t, mean(correct_so_far), mean(best_so_far)});
  }
  return points;
}

// Mean over tasks of the value `pick` reads from each.
template <class Pick>
double mean_over(const std::vector<const TaskMetrics*>& tasks, Pick pick) {
  std::vector<double> values;
  for (const auto* t : tasks) values.push_back(pick(*t));
  return mean(values);
}

std::vector<TurnPoint> group_by_turn(const std::vector<const TaskMetrics*>& tasks) {
  int last_turn = 0;
  for (const auto* t : tasks) last_turn = std::max(last_turn, t->n_turns);
  std::vector<TurnPoint> points;
  for (int turn = 1; turn <= last_turn; ++turn) {
    auto at = [turn](const TaskMetrics& t) -> const TurnPoint& {
      return t.by_turn[static_cast<std::size_t>(std::min(turn, t.n_turns) - 1)];
    };
    points.push_back({turn, mean_over(tasks, [&](const TaskMetrics& t) { return at(t).correctness; }),
                      mean_over(tasks, [&](const TaskMetrics& t) { return at(t).mean_best_speedup; })});
  }
  return points;
}

std::string level_name(const std::optional<int>& level) {
  return "level " + (level ? std::to_string(*level) : std::string("none"));
}

std::string split_name(const std::optional<std::string>& split) { return "split " + split.value_or("none"); }

}  // namespace

TaskMetrics task_metrics(const TaskTrajectories& task, const MetricsConfig& config) {
  TaskMetrics m;
  m.task = task.task;
  m.task_id = task.task_id;
  m.level = task.level;
  m.split = task.split;
  m.n_trajectories = static_cast<int>(task.trajectories.size());
  m.n_turns = n_turns(task);
  std::vector<bool> correct;
  std::vector<double> best;  // each trajectory's best speedup, 0 when incorrect
  for (const auto& trajectory : task.trajectories) {
    correct.push_back(any_correct(trajectory));
    best.push_back(best_speedup(trajectory));
  }
  m.n_correct_trajectories = static_cast<int>(std::count(correct.begin(), correct.end(), true));
  m.correctness = static_cast<double>(m.n_correct_trajectories) / m.n_trajectories;
  for (int k : ks_up_to(m.n_trajectories, config.ks)) {
    m.pass_at_k.push_back({k, pass_at_k(m.n_trajectories, m.n_correct_trajectories, k)});
    m.best_at_k.push_back({k, expected_max_of_k(best, k)});
  }
  m.best_speedup = *std::max_element(best.begin(), best.end());
  m.fast_p = task_fast_p(correct, best, m.best_speedup, m.n_correct_trajectories > 0, config);
  m.by_turn = task_by_turn(task, m.n_turns);
  return m;
}

GroupMetrics group_metrics(const std::string& name, const std::vector<const TaskMetrics*>& tasks,
                           const MetricsConfig& config) {
  assert(!tasks.empty());
  GroupMetrics g;
  g.name = name;
  g.n_tasks = static_cast<int>(tasks.size());
  int min_trajectories = INT_MAX;
  std::vector<double> solved_speedups;  // best speedups of solved tasks, for the geometric mean
  for (const auto* t : tasks) {
    g.n_trajectories += t->n_trajectories;
    min_trajectories = std::min(min_trajectories, t->n_trajectories);
    if (t->n_correct_trajectories > 0 && t->best_speedup > 0) solved_speedups.push_back(t->best_speedup);
  }
  g.correctness = mean_over(tasks, [](const TaskMetrics& t) { return t.correctness; });
  g.solved_rate = mean_over(tasks, [](const TaskMetrics& t) { return t.n_correct_trajectories > 0 ? 1.0 : 0.0; });
  // Every task lists the same k values up to its own n, so the first j entries line up.
  const std::vector<int> ks = ks_up_to(min_trajectories, config.ks);
  for (std::size_t j = 0; j < ks.size(); ++j) {
    g.pass_at_k.push_back({ks[j], mean_over(tasks, [j](const TaskMetrics& t) { return t.pass_at_k[j].value; })});
    g.best_at_k.push_back({ks[j], mean_over(tasks, [j](const TaskMetrics& t) { return t.best_at_k[j].value; })});
  }
  g.mean_best_speedup = mean_over(tasks, [](const TaskMetrics& t) { return t.best_speedup; });
  for (std::size_t j = 0; j < config.fast_p_thresholds.size(); ++j) {
    g.fast_p.push_back({config.fast_p_thresholds[j],
                        mean_over(tasks, [j](const TaskMetrics& t) { return t.fast_p[j].at_best; }),
                        mean_over(tasks, [j](const TaskMetrics& t) { return t.fast_p[j].at_1; })});
  }
  g.geomean_speedup = geometric_mean(solved_speedups);
  g.n_geomean_tasks = static_cast<int>(solved_speedups.size());
  g.by_turn = group_by_turn(tasks);
  return g;
}

Report compute_report(const std::vector<TurnRecord>& records, const MetricsConfig& config) {
  assert(!records.empty());
  Report report;
  for (const auto& task : group_by_task(records)) report.tasks.push_back(task_metrics(task, config));

  std::vector<const TaskMetrics*> all;
  // Keys sort levels numerically and splits by name; the empty optional (none) goes last.
  std::map<std::pair<bool, int>, std::vector<const TaskMetrics*>> levels;
  std::map<std::pair<bool, std::string>, std::vector<const TaskMetrics*>> splits;
  for (const auto& t : report.tasks) {
    all.push_back(&t);
    levels[{!t.level, t.level.value_or(0)}].push_back(&t);
    splits[{!t.split, t.split.value_or("")}].push_back(&t);
  }
  report.overall = group_metrics("overall", all, config);
  for (const auto& [key, tasks] : levels) report.by_level.push_back(group_metrics(level_name(tasks[0]->level), tasks, config));
  for (const auto& [key, tasks] : splits) report.by_split.push_back(group_metrics(split_name(tasks[0]->split), tasks, config));
  return report;
}

common::Expected<Report> report_from_run(const std::filesystem::path& run_dir_or_jsonl, const MetricsConfig& config) {
  const auto path = trajectory_file_path(run_dir_or_jsonl);
  auto file = read_trajectory_file(path);
  if (!file) return file.error();
  if (file->records.empty()) return common::make_error(path.string() + ": holds no turn records");
  Report report = compute_report(file->records, config);
  report.source = path.string();
  report.warnings = std::move(file->warnings);
  report.turns = std::move(file->records);
  return report;
}

}  // namespace kernelrl::metrics
