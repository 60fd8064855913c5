#include "eval/task_check.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

#include "common/table.hpp"

namespace kernelrl::eval {

namespace fs = std::filesystem;

TaskCheckRow check_task(Engine& engine, const fs::path& task, const TaskCheckConfig& config) {
  TaskCheckRow row;
  row.task = task.string();
  auto info = engine.task_info(task);
  if (!info) {
    row.problems.push_back(info.error().message);
    return row;
  }
  row.ref_us = info->ref_runtime.median_us;
  row.sol_us = info->sol_us;
  row.input_bytes = info->input_bytes;
  row.problems = info->problems;
  if (info->signature.inputs.empty()) row.problems.push_back("get_inputs() returns no tensors");
  if (row.input_bytes > config.max_input_bytes) {
    row.problems.push_back("inputs take " + std::to_string(row.input_bytes) + " bytes, over the bound of " +
                           std::to_string(config.max_input_bytes));
  }
  if (info->ref_runtime.n > 0 && row.ref_us < config.min_ref_us) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "eager reference takes %.1f us, under the minimum of %.1f us", row.ref_us,
                  config.min_ref_us);
    row.problems.push_back(buf);
  }
  row.ok = row.problems.empty();
  return row;
}

std::vector<TaskCheckRow> check_tasks(Engine& engine, const std::vector<fs::path>& tasks, const TaskCheckConfig& config,
                                      const std::function<void(const TaskCheckRow&)>& on_row) {
  std::vector<TaskCheckRow> rows(tasks.size());
  std::atomic<std::size_t> next{0};
  std::mutex report;
  auto work = [&] {
    for (std::size_t i = next++; i < tasks.size(); i = next++) {
      rows[i] = check_task(engine, tasks[i], config);
      std::lock_guard<std::mutex> lock(report);
      if (on_row) on_row(rows[i]);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, engine.n_workers()); ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  return rows;
}

std::string render_task_check(const std::vector<TaskCheckRow>& rows) {
  common::Table table({"task", "check", "eager_us", "input_MB", "problem"});
  int n_ok = 0;
  for (const auto& r : rows) {
    n_ok += r.ok;
    char us[32], mb[32];
    std::snprintf(us, sizeof us, "%.1f", r.ref_us);
    std::snprintf(mb, sizeof mb, "%.1f", static_cast<double>(r.input_bytes) / (1 << 20));
    std::string first = r.problems.empty() ? "" : r.problems.front();
    if (first.size() > 100) first = first.substr(0, 97) + "...";
    if (r.problems.size() > 1) first += " (+" + std::to_string(r.problems.size() - 1) + " more)";
    table.add_row({r.task, r.ok ? "ok" : "FAIL", us, mb, first});
  }
  std::ostringstream s;
  s << table.render() << n_ok << " of " << rows.size() << " tasks pass\n";
  return s.str();
}

}  // namespace kernelrl::eval
