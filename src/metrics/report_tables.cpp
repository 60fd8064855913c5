// Cells of the report tables. A k that some group lacks (too few trajectories) shows as "-".
#include "common/format.hpp"
#include "metrics/report_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kernelrl::metrics {

namespace {

std::vector<const GroupMetrics*> all_groups(const Report& report) {
  std::vector<const GroupMetrics*> groups{&report.overall};
  for (const auto& g : report.by_level) groups.push_back(&g);
  for (const auto& g : report.by_split) groups.push_back(&g);
  return groups;
}

std::string value_at_k(const std::vector<KValue>& values, int k, std::string (*format)(double)) {
  auto it = std::find_if(values.begin(), values.end(), [k](const KValue& v) { return v.k == k; });
  return it == values.end() ? "-" : format(it->value);
}

std::string task_level(const TaskMetrics& t) { return t.level ? std::to_string(*t.level) : "none"; }

}  // namespace

std::string format_percent(double fraction) { return common::format_fixed(100.0 * fraction, 1) + "%"; }

std::string format_speedup(double speedup) { return common::format_fixed(speedup, 2) + "x"; }

std::string format_p(double p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

CellTable summary_table(const Report& report) {
  const auto groups = all_groups(report);
  std::set<int> ks;
  for (const auto* g : groups) {
    for (const auto& v : g->pass_at_k) ks.insert(v.k);
  }
  CellTable table{"Summary (means over tasks; every task weighs the same)", {"group", "tasks", "traj", "correct", "solved"}, {}};
  for (int k : ks) table.headers.push_back("pass@" + std::to_string(k));
  for (int k : ks) table.headers.push_back("best@" + std::to_string(k));
  for (const char* h : {"best", "geomean"}) table.headers.push_back(h);
  for (const auto* g : groups) {
    std::vector<std::string> row{g->name, std::to_string(g->n_tasks), std::to_string(g->n_trajectories),
                                 format_percent(g->correctness), format_percent(g->solved_rate)};
    for (int k : ks) row.push_back(value_at_k(g->pass_at_k, k, format_percent));
    for (int k : ks) row.push_back(value_at_k(g->best_at_k, k, format_speedup));
    row.push_back(format_speedup(g->mean_best_speedup));
    row.push_back(g->geomean_speedup ? format_speedup(*g->geomean_speedup) : "-");
    table.rows.push_back(std::move(row));
  }
  return table;
}

CellTable fast_p_table(const Report& report) {
  CellTable table{"fast_p: fraction of tasks correct with speedup > p (best of all trajectories; @1: one trajectory)",
                  {"group"}, {}};
  for (const auto& f : report.overall.fast_p) table.headers.push_back("fast_" + format_p(f.p));
  for (const auto& f : report.overall.fast_p) table.headers.push_back("fast_" + format_p(f.p) + "@1");
  for (const auto* g : all_groups(report)) {
    std::vector<std::string> row{g->name};
    for (const auto& f : g->fast_p) row.push_back(format_percent(f.at_best));
    for (const auto& f : g->fast_p) row.push_back(format_percent(f.at_1));
    table.rows.push_back(std::move(row));
  }
  return table;
}

CellTable by_turn_table(const GroupMetrics& group) {
  CellTable table{"Serial scaling (" + group.name + "): using turns 1..t of every trajectory",
                  {"turn", "correct", "mean best speedup"}, {}};
  for (const auto& p : group.by_turn) {
    table.rows.push_back({std::to_string(p.turn), format_percent(p.correctness), format_speedup(p.mean_best_speedup)});
  }
  return table;
}

CellTable by_k_table(const GroupMetrics& group) {
  CellTable table{"Parallel scaling (" + group.name + "): k trajectories per task", {"k", "pass@k", "best@k"}, {}};
  for (std::size_t j = 0; j < group.pass_at_k.size(); ++j) {
    table.rows.push_back({std::to_string(group.pass_at_k[j].k), format_percent(group.pass_at_k[j].value),
                          format_speedup(group.best_at_k[j].value)});
  }
  return table;
}

CellTable task_table(const Report& report) {
  CellTable table{"Per task", {"task", "level", "split", "traj", "turns", "correct", "pass@1", "best@1", "best"}, {}};
  for (const auto& f : report.overall.fast_p) table.headers.push_back("fast_" + format_p(f.p));
  for (const auto& t : report.tasks) {
    std::vector<std::string> row{t.task_id,
                                 task_level(t),
                                 t.split.value_or("none"),
                                 std::to_string(t.n_trajectories),
                                 std::to_string(t.n_turns),
                                 format_percent(t.correctness),
                                 value_at_k(t.pass_at_k, 1, format_percent),
                                 value_at_k(t.best_at_k, 1, format_speedup),
                                 format_speedup(t.best_speedup)};
    for (const auto& f : t.fast_p) row.push_back(f.at_best > 0 ? "yes" : "no");
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace kernelrl::metrics
