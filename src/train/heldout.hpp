// Held-out evaluation during training (issue 22): the policy being trained, sampled on the tasks
// of another split with a fixed seed and a fixed shape (m trajectories x n turns per task), scored
// by the same evaluator as the training rollouts. It runs before the first step, after every K
// steps and after the last, so the run's log holds a held-out curve whose points differ only by
// the policy; two runs with the same held-out settings ask the same turn-1 prompts and sample with
// the same seed (which sample lands in which trajectory follows the sampler's batching order).
// `kernelrl train --steps 0 --heldout-split test` evaluates a model and trains nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::train {

struct HeldOutConfig {
  std::string split;            // the tasks of this manifest split of the run's --tasks; "": no evaluation
  int every = 0;                // also after every `every` steps (0: only before the first and after the last)
  int n_trajectories = 8;       // m per held-out task
  int n_turns = 1;              // n per trajectory (turn 1 is the single-turn measure)
  std::uint64_t seed = 20261201;  // the sampler's seed for every evaluation, whatever the step
  // Far held-out tasks (files or folders, any split): evaluated with the near ones, the same way,
  // into RUN/heldout-far/ and reported apart (`heldout_far/...`): operators unlike the training
  // ones (issue 41), where the split's held-out ops are near-twins of trained ones.
  std::vector<std::filesystem::path> far_tasks;

  bool enabled() const { return !split.empty(); }
};

// An Error naming the option when a field is out of range.
common::Fallible check(const HeldOutConfig& config);

// Whether the policy after `steps_done` of `n_steps` steps is evaluated.
bool heldout_due(const HeldOutConfig& config, int steps_done, int n_steps);

// The evaluation's numbers as `PREFIX/...` keys (`heldout`, `heldout_far`) over the turns the model answered:
// correct_rate (every turn), turn1_correct_rate, trajectory_correct_rate (any turn of the
// trajectory correct), tasks_solved_frac (any turn of any trajectory), mean_speedup_correct,
// mean_best_speedup (per trajectory its best correct speedup, 0 when none: incorrect counts as 0),
// reward_mean, degenerate_frac, n_answered.
nlohmann::json heldout_metrics(const std::vector<trajectory::TurnRecord>& records, const std::string& prefix = "heldout");

}  // namespace kernelrl::train
