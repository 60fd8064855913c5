// `kernelrl tasks check`: validates every task file of a folder on this device: it loads, the
// reference runs, its outputs are healthy (finite, not nearly zero or constant, changing with the
// seed), its inputs fit the size bound and its eager time reaches the minimum.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "eval/engine.hpp"

namespace kernelrl::eval {

struct TaskCheckConfig {
  double min_ref_us = 0;                        // eager reference at least this long (100 on an H200)
  std::int64_t max_input_bytes = 2ll << 30;     // inputs at most this large (2 GB)
};

struct TaskCheckRow {
  std::string task;
  bool ok = false;
  double ref_us = 0;
  double sol_us = 0;  // speed of light on this GPU (0: no manifest entry or unknown GPU)
  std::int64_t input_bytes = 0;
  std::vector<std::string> problems;  // why it fails, one reason each
};


// Checks one task. A task that cannot even load is a failing row, not an Error.
TaskCheckRow check_task(Engine& engine, const std::filesystem::path& task, const TaskCheckConfig& config);

// Checks every task, as many at once as the engine has workers (the reference timings still run
// one at a time). Rows come back in the order of `tasks`; `on_row` (optional) is called as each
// finishes, from any thread, never concurrently.
std::vector<TaskCheckRow> check_tasks(Engine& engine, const std::vector<std::filesystem::path>& tasks,
                                      const TaskCheckConfig& config,
                                      const std::function<void(const TaskCheckRow&)>& on_row = {});

// A table with one row per task and a closing count.
std::string render_task_check(const std::vector<TaskCheckRow>& rows);

}  // namespace kernelrl::eval
