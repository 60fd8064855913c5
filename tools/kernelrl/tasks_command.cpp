#include "tasks_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "common/progress.hpp"
#include "eval/render.hpp"
#include "eval/task_check.hpp"
#include "exit_codes.hpp"
#include "task/selection.hpp"

namespace kernelrl::cli {

namespace {

int run_show(const TasksArgs& args, const eval::EngineConfig& config, const EvalArgs& a) {
  auto engine = make_engine(config, a);
  if (!engine) {
    std::cerr << "kernelrl tasks show: could not start the engine: " << engine.error().message << "\n";
    return kCouldNotEvaluate;
  }
  auto task = task_at_size(args.show_task, a.size);
  if (!task) {
    std::cerr << "kernelrl tasks show: " << task.error().message << "\n";
    return kCouldNotEvaluate;
  }
  auto info = (*engine)->task_info(*task);
  if (!info) {
    std::cerr << "kernelrl tasks show: " << info.error().message << "\n";
    return kCouldNotEvaluate;
  }
  if (args.show_json) {
    std::cout << nlohmann::json{{"task", args.show_task}, {"signature", task::to_json(info->signature)},
                                {"ref_runtime", info->ref_runtime}, {"sol_us", info->sol_us}, {"device", info->device},
                                {"device_info", info->device_info}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << eval::render_task_info(args.show_task, *info);
  }
  return kEvaluated;
}

int run_check(const TasksArgs& args, const eval::EngineConfig& config, const EvalArgs& a) {
  auto files = task::find_task_files(args.check_dir);
  if (!files) {
    std::cerr << "kernelrl tasks check: " << files.error().message << "\n";
    return kCouldNotEvaluate;
  }
  if (args.check_sample > 0) *files = task::evenly_spaced(*files, args.check_sample);
  std::map<std::string, std::string> shipped;  // sized copy -> the task as found, for the rows
  for (auto& file : *files) {
    auto sized = task_at_size(file, a.size);
    if (!sized) {
      std::cerr << "kernelrl tasks check: " << sized.error().message << "\n";
      return kCouldNotEvaluate;
    }
    shipped[sized->string()] = file.string();
    file = *sized;
  }
  auto engine = make_engine(config, a);
  if (!engine) {
    std::cerr << "kernelrl tasks check: could not start the engine: " << engine.error().message << "\n";
    return kCouldNotEvaluate;
  }
  eval::TaskCheckConfig check;
  check.min_ref_us =
      args.check_min_ref_us >= 0 ? args.check_min_ref_us : ((*engine)->device() == "cuda" ? 100.0 : 0.0);
  check.max_input_bytes = static_cast<std::int64_t>(args.check_max_input_gb * (1ull << 30));
  common::ProgressBar bar("check", static_cast<std::int64_t>(files->size()),
                          common::stderr_is_tty() && !args.check_json);
  auto rows = eval::check_tasks(**engine, *files, check, [&](const eval::TaskCheckRow& r) {
    if (args.check_json) {
      std::cout << nlohmann::json{{"task", shipped[r.task]}, {"size", a.size}, {"ok", r.ok}, {"ref_us", r.ref_us}, {"sol_us", r.sol_us},
                                  {"input_bytes", r.input_bytes}, {"problems", r.problems}, {"device", (*engine)->device()}}
                       .dump()
                << "\n" << std::flush;
    }
    bar.advance(1, std::filesystem::path(r.task).filename().string());
  });
  bar.finish();
  for (auto& r : rows) r.task = shipped[r.task];
  if (!args.check_json) std::cout << eval::render_task_check(rows);
  bool all_ok = std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.ok; });
  return all_ok ? kEvaluated : kExpectationFailed;
}

}  // namespace

CLI::App* add_tasks_command(CLI::App& app, TasksArgs& args) {
  auto* tasks_cmd = app.add_subcommand("tasks", "inspect tasks");
  tasks_cmd->require_subcommand(1);
  auto* show_cmd = tasks_cmd->add_subcommand("show", "print a task's signature and eager reference time");
  show_cmd->add_option("file", args.show_task, "task file")->required();
  show_cmd->add_flag("--json", args.show_json, "print JSON");
  auto* check_cmd = tasks_cmd->add_subcommand("check", "validate every task of a folder on this device");
  check_cmd->add_option("dir", args.check_dir, "folder of task files (searched recursively)")->capture_default_str();
  check_cmd->add_option("--min-ref-us", args.check_min_ref_us,
                        "minimum eager reference time (default: 100 on a GPU, none on the CPU)");
  check_cmd->add_option("--max-input-gb", args.check_max_input_gb, "maximum size of a task's inputs")
      ->capture_default_str();
  check_cmd->add_flag("--json", args.check_json, "print one JSON line per task");
  check_cmd->add_option("--sample", args.check_sample,
                        "check only this many tasks, evenly spaced in name order (e.g. on a CPU); 0: all");
  return tasks_cmd;
}

int run_tasks(const CLI::App& cmd, const TasksArgs& args, const eval::EngineConfig& config, const EvalArgs& a) {
  if (cmd.got_subcommand("show")) return run_show(args, config, a);
  if (cmd.got_subcommand("check")) return run_check(args, config, a);
  return kUsageError;
}

}  // namespace kernelrl::cli
