// The options the evaluating commands share (eval, tasks, rollout, train, worker, doctor): the
// engine's checking and timing settings, the task size, the compile cache and target, and the
// engine they describe, started with this binary as its worker.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/engine.hpp"

namespace kernelrl::cli {

// What `eval` was asked (task, candidate or batch, output) and the options every command that
// starts an engine shares: the task size and the compile cache and target.
struct EvalArgs {
  std::string task, candidate, format, batch, out;
  std::string size = "full";  // task size (task/sizes.hpp)
  bool json = false, no_cache = false, check_expect = false, resume = false;
  std::string cache_dir, arch;
  std::string gpus;  // --gpus: one engine per GPU (common/gpu_list.hpp); empty: the environment's device
};

// The engine's options (device, trials, tolerances, timing, rules, limits, pools) on `cmd`, into `config`.
void add_engine_options(CLI::App* cmd, eval::EngineConfig& config);

// How --help shows the default of a list-of-paths option (--tasks): each path quoted, separated by
// spaces. Set explicitly because CLI11's own rendering of a vector default depends on which
// operator<< overloads the instantiating file sees (glog, through torch, adds one), so it would
// change with the link order.
std::string quoted_paths(const std::vector<std::filesystem::path>& paths);

// --size on `cmd`, into `size`.
void add_size_option(CLI::App* cmd, std::string& size);

// The file to evaluate for `task` at `size` (a sized copy, task/sizes.hpp); says once on stderr
// when a task has no manifest entry and so keeps its own size.
common::Expected<std::filesystem::path> task_at_size(const std::filesystem::path& task, const std::string& size);

// The compile cache and target options that make_engine() applies.
void add_compile_options(CLI::App* cmd, EvalArgs& a);

// The engine configuration the options describe, complete (this binary runs the workers).
eval::EngineConfig resolved_engine_config(eval::EngineConfig config, const EvalArgs& a);

// Starts the engine resolved_engine_config() describes.
common::Expected<std::unique_ptr<eval::Engine>> make_engine(const eval::EngineConfig& config, const EvalArgs& a);

}  // namespace kernelrl::cli
