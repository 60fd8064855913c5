// The settings a rollout's results depend on, as JSON, for run.json and the trainer's train.json,
// where a resumed run must match them. Derived from the configuration structs member by member:
// each struct is taken apart with a structured binding that names every member, so a member
// added to one of them does not compile until it is described here or named as no setting.
#pragma once

#include <nlohmann/json.hpp>

#include "rollout/rollout_config.hpp"

namespace kernelrl::rollout {

// Every setting of `config` except where the run is written (out_dir) and how it is run
// (concurrency, max_policy_failures, show_progress): tasks, split, format, strategy,
// trajectories, turns, beam_width (null unless beam), lenient_parse, score, return, advantage,
// prompt (templates_dir, example_file, gpu, max_chars, max_tokens).
nlohmann::json describe_settings(const RolloutConfig& config);

}  // namespace kernelrl::rollout
