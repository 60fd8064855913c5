// `kernelrl tasks show` (a task's signature and eager reference time) and `kernelrl tasks check`
// (every task of a folder validated on this device, eval/task_check.hpp).
#pragma once

#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

#include "engine_options.hpp"
#include "eval/engine.hpp"

namespace kernelrl::cli {

struct TasksArgs {
  std::string show_task;            // show: the task file
  bool show_json = false;           // show: print JSON
  std::string check_dir = "tasks";  // check: folder of task files (searched recursively)
  double check_min_ref_us = -1;     // check: minimum eager reference time, us (< 0: 100 on a GPU, 0 on the CPU)
  double check_max_input_gb = 2;    // check: maximum size of a task's inputs, GiB
  bool check_json = false;          // check: one JSON line per task
  std::size_t check_sample = 0;     // check: only this many tasks, evenly spaced in name order (0: all)
};

// Registers `tasks` with its subcommands `show` and `check` and their own options on `app`, into
// `args`; the caller adds the size and engine options to each subcommand. Returns `tasks`.
CLI::App* add_tasks_command(CLI::App& app, TasksArgs& args);

// Runs the subcommand of `cmd` (the command add_tasks_command returned) that was given, with the
// engine `config` and `a` describe, at a.size. Returns the CLI's exit code: 0 shown, or checked and
// every task passed; 1 a task failed its checks; 2 could not start the engine or read a task;
// 64 no subcommand.
int run_tasks(const CLI::App& cmd, const TasksArgs& args, const eval::EngineConfig& config, const EvalArgs& a);

}  // namespace kernelrl::cli
