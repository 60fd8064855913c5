#include "rollout/rollout_config.hpp"

#include "kernelrl/build_config.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using common::make_error;

std::string to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::MXN:
      return "mxn";
    case Strategy::PARALLEL:
      return "parallel";
    case Strategy::SERIAL:
      return "serial";
    case Strategy::BEAM:
      return "beam";
  }
  return "?";
}

common::Expected<Strategy> parse_strategy(const std::string& name) {
  for (Strategy s : {Strategy::MXN, Strategy::PARALLEL, Strategy::SERIAL, Strategy::BEAM})
    if (to_string(s) == name) return s;
  return make_error("strategy '" + name + "' is not one of mxn, parallel, serial, beam");
}

fs::path default_example_file(common::Format format) {
  const fs::path dir = fs::path(build::source_dir) / "examples" / "vector_add";
  switch (format) {
    case common::Format::HOST:
      return dir / "host.cpp";
    case common::Format::KERNELBENCH:
      return dir / "kernelbench.py";
    case common::Format::NATIVE:
      break;
  }
  return dir / "native.cu";
}

common::Expected<RolloutConfig> resolve(RolloutConfig c) {
  if (c.tasks.empty()) return make_error("tasks: give at least one task file or folder");
  if (c.split != "all" && c.split != "train" && c.split != "test")
    return make_error("split '" + c.split + "' is not one of train, test, all");
  if (c.out_dir.empty()) return make_error("out: the run directory is required");
  if (c.n_trajectories < 1) return make_error("trajectories must be at least 1");
  if (c.n_turns < 1) return make_error("turns must be at least 1");
  if (c.concurrency < 1) return make_error("concurrency must be at least 1");
  if (c.max_policy_failures < 1) return make_error("max policy failures must be at least 1");
  if (c.returns.gamma < 0) return make_error("gamma must not be negative");
  if (c.score.speedup_cap && !(*c.score.speedup_cap > 0)) return make_error("speedup cap must be positive");
  if (c.strategy == Strategy::PARALLEL) c.n_turns = 1;
  if (c.strategy == Strategy::SERIAL) c.n_trajectories = 1;
  if (c.strategy == Strategy::BEAM) {
    if (c.beam_width < 1 || c.beam_width > c.n_trajectories || c.n_trajectories % c.beam_width != 0) {
      return make_error("beam width " + std::to_string(c.beam_width) + " must divide the number of trajectories (" +
                        std::to_string(c.n_trajectories) + ")");
    }
  } else {
    c.beam_width = 0;  // not used; recorded as null
  }
  if (c.templates_dir.empty()) c.templates_dir = fs::path(build::source_dir) / "prompts";
  if (c.example_file.empty()) c.example_file = default_example_file(c.format);
  return c;
}

}  // namespace kernelrl::rollout
