// What a rollout does (DESIGN.md, "The recipe"): which tasks, how many trajectories of how many
// turns, how they branch (strategy), how turns are scored and credited, how prompts are built,
// where the run is written and how many trajectories run at once.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "rl/rewards.hpp"
#include "rollout/prompt.hpp"

namespace kernelrl::rollout {

enum class Strategy {
  MXN,       // m independent trajectories of n turns each (default; Kevin: 16 x 4)
  PARALLEL,  // m trajectories of one turn (best-of-m sampling)
  SERIAL,    // one trajectory of n turns
  BEAM,      // after each turn keep the best b trajectories by score, branch each into m / b copies
};

std::string to_string(Strategy strategy);  // "mxn", "parallel", "serial", "beam"
common::Expected<Strategy> parse_strategy(const std::string& name);

struct RolloutConfig {
  std::vector<std::filesystem::path> tasks;  // task files, or folders searched recursively for *.py
  std::string split = "all";                 // "train", "test" or "all": the tasks' split in manifest.json
  std::string task_size = "full";            // "full", or a size the tasks' manifest names ("small": CPU runs)
  common::Format format = common::Format::NATIVE;  // candidate format the model writes
  Strategy strategy = Strategy::MXN;
  int n_trajectories = 16;  // m: trajectories per task (serial: 1)
  int n_turns = 4;          // n: turns per trajectory (parallel: 1); beam: rounds of one turn
  int beam_width = 4;       // b: beam only; trajectories kept after each round, divides m

  rl::ScoreConfig score;          // s = w_correct * correct + speedup * correct
  rl::ReturnConfig returns;       // gamma and sum / max over later turns
  rl::AdvantageConfig advantage;  // GRPO over the task, per turn, or leave-one-out per turn

  std::filesystem::path templates_dir;  // prompt templates (prompts/); empty: the source tree's
  std::filesystem::path example_file;   // one-shot example answer; empty: examples/vector_add/'s for the format
  PromptConfig prompt;                  // GPU named in the prompt, character budget

  std::filesystem::path out_dir;  // the run directory (run.json, trajectories.jsonl, candidates/)
  int concurrency = 32;           // (task, trajectory) units generating or evaluating at once
  int max_policy_failures = 8;    // consecutive turns without a response (after retries) that stop the run
  bool show_progress = false;     // progress bar over turns on stderr
  bool lenient_parse = false;     // any fence language, a cut-off last block accepted (format-reward
                                  // training of small models; response_parser.hpp)
};

// Fills the defaults (templates, example, the shape a strategy implies: parallel m x 1, serial
// 1 x n) and checks every field; an Error names the field and the allowed values.
common::Expected<RolloutConfig> resolve(RolloutConfig config);

// The one-shot example shipped for `format` (examples/vector_add/native.cu, host.cpp, kernelbench.py).
std::filesystem::path default_example_file(common::Format format);

}  // namespace kernelrl::rollout
