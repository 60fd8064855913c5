// to_json: one object per struct; k-indexed and turn-indexed series as arrays of points so that
// the HTML charts read them directly.
#include "metrics/report_json.hpp"

namespace kernelrl::metrics {

using nlohmann::json;

namespace {

json k_series(const std::vector<KValue>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back({{"k", v.k}, {"value", v.value}});
  return out;
}

json fast_p_series(const std::vector<FastP>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back({{"p", v.p}, {"at_best", v.at_best}, {"at_1", v.at_1}});
  return out;
}

json turn_series(const std::vector<TurnPoint>& points) {
  json out = json::array();
  for (const auto& p : points) {
    out.push_back({{"turn", p.turn}, {"correctness", p.correctness}, {"mean_best_speedup", p.mean_best_speedup}});
  }
  return out;
}

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

json to_json(const TaskMetrics& t) {
  return {{"task", t.task},
          {"task_id", t.task_id},
          {"level", or_null(t.level)},
          {"split", or_null(t.split)},
          {"n_trajectories", t.n_trajectories},
          {"n_correct_trajectories", t.n_correct_trajectories},
          {"n_turns", t.n_turns},
          {"correctness", t.correctness},
          {"pass_at_k", k_series(t.pass_at_k)},
          {"best_at_k", k_series(t.best_at_k)},
          {"best_speedup", t.best_speedup},
          {"fast_p", fast_p_series(t.fast_p)},
          {"by_turn", turn_series(t.by_turn)}};
}

json to_json(const GroupMetrics& g) {
  return {{"name", g.name},
          {"n_tasks", g.n_tasks},
          {"n_trajectories", g.n_trajectories},
          {"correctness", g.correctness},
          {"solved_rate", g.solved_rate},
          {"pass_at_k", k_series(g.pass_at_k)},
          {"best_at_k", k_series(g.best_at_k)},
          {"mean_best_speedup", g.mean_best_speedup},
          {"fast_p", fast_p_series(g.fast_p)},
          {"geomean_speedup", or_null(g.geomean_speedup)},
          {"n_geomean_tasks", g.n_geomean_tasks},
          {"by_turn", turn_series(g.by_turn)}};
}

json to_json(const Report& r) {
  json levels = json::array(), splits = json::array(), tasks = json::array();
  for (const auto& g : r.by_level) levels.push_back(to_json(g));
  for (const auto& g : r.by_split) splits.push_back(to_json(g));
  for (const auto& t : r.tasks) tasks.push_back(to_json(t));
  return {{"schema", 1},       {"source", r.source}, {"warnings", r.warnings}, {"overall", to_json(r.overall)},
          {"levels", levels}, {"splits", splits},   {"tasks", tasks}};
}

}  // namespace kernelrl::metrics
