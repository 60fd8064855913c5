// Refinement pairs for the supervised warm start (issue 41): a model trained on turn-1 prompts
// alone never sees a refinement prompt, so "it does not use the feedback" cannot be told apart
// from "it never learnt what such a prompt asks". Each pair here is the rollout's own prompt for
// turn t + 1 after a real failed attempt at turn t (its code, summary and the feedback the engine
// gave, with the attempts before it in its trajectory), answered with the task's correct solution.
#pragma once

#include <filesystem>
#include <vector>

#include "common/expected.hpp"
#include "rollout/rollout_config.hpp"
#include "train/sft.hpp"

namespace kernelrl::train {

// From the records of `trajectories` (a rollout's trajectories.jsonl, or its run folder): one pair
// per failed attempt (unparsable or evaluated and not correct) at a turn before `max_turn`, of a
// task of `config` (resolved; train split) with a solution in `solutions_dir`. Records of other
// tasks (held-out ones included) are left out. Errors name the file: unreadable, or no pair at all.
common::Expected<std::vector<SftPair>> make_refinement_pairs(const rollout::RolloutConfig& config,
                                                             const std::filesystem::path& solutions_dir,
                                                             const std::filesystem::path& trajectories, int max_turn);

}  // namespace kernelrl::train
