// The supervised warm start (`kernelrl sft`, issue 22): before RL, a few hundred steps of
// next-token training on (prompt, correct kernel) pairs, so that a small model learns the ABI and
// the shape of an answer. The prompt of a pair is exactly the rollout's first-turn prompt for the
// task (same templates, one-shot example and budget); the answer is the task's correct solution
// fenced as the one-shot example is (without the file's leading comment lines), followed by the
// solution's own one-line approach as its summary. Pairs come from train-split tasks only: a held-out (test) task given is an error, so
// held-out operators never reach the weights.
//
// Each step is one GRPO update (train/update.hpp) with advantage 1 on every pair and one
// minibatch: the ratio to the policy before the step is 1, so the gradient is that of the
// response tokens' summed log-likelihood over the constant normaliser (batch x longest answer).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "rollout/prompt.hpp"
#include "rollout/rollout_config.hpp"

namespace kernelrl::train {

struct SftPair {
  std::string task_id;                   // the task file's name without .py
  std::vector<rollout::Message> prompt;  // the rollout's prompt of `turn`
  std::string answer;                    // fenced solution, then its summary
  int turn = 1;                          // > 1: a refinement pair (train/sft_refinement.hpp)
};

// What a pair answers with: the solution `code` fenced as the one-shot example is (without the
// file's leading comment lines), then its own one-line approach as the summary.
std::string solution_answer(const rollout::PromptTemplates& templates, const std::string& code);

// The solution of task `task_id` in `solutions_dir` for `format`: <id>.native.cu, <id>.host.cpp or
// <id>.kernelbench.py.
std::filesystem::path solution_path(const std::filesystem::path& solutions_dir, const std::string& task_id,
                                    common::Format format);

// One pair per task of `config` (resolved: rollout::resolve) that has a solution; tasks without one
// are left out and counted in *n_missing. Errors: a task of the test split, no pair at all, an
// unreadable template or solution (named).
common::Expected<std::vector<SftPair>> make_sft_pairs(const rollout::RolloutConfig& config,
                                                      const std::filesystem::path& solutions_dir, int* n_missing);

struct SftConfig {
  std::filesystem::path model;      // starting policy: a .gguf file or a Hugging Face folder
  std::filesystem::path tokenizer;  // empty: the model's
  std::string device = "auto";
  rollout::RolloutConfig tasks;     // tasks, split (train), format, size, templates and prompt budget; resolved
  std::filesystem::path solutions;  // folder of correct solutions (tasks/fixtures/starter)
  std::filesystem::path refinement; // a rollout's trajectories.jsonl (or its folder): refinement pairs too
  int refinement_max_turn = 4;      // the latest turn a refinement pair's prompt is for
  std::filesystem::path out_dir;    // sft_log.jsonl, pairs.jsonl, sft.json, checkpoint/
  int n_steps = 200;
  int batch = 8;                    // pairs per step (cycled in a seeded order)
  double lr = 2e-5;
  double weight_decay = 0.0;
  double max_grad_norm = 1.0;
  std::int64_t micro_batch_tokens = 16384;
  std::uint64_t seed = 1;
  bool activation_checkpointing = true;
};

struct SftSummary {
  int n_pairs = 0;         // pairs trained on
  int n_refinement_pairs = 0;  // of those, refinement pairs (turn > 1)
  int n_missing = 0;       // tasks without a solution
  int n_too_long = 0;      // pairs left out: prompt + answer over the model's context
  int steps_run = 0;
  double first_nll = 0;    // mean negative log-likelihood per answer token, before step 1
  double last_nll = 0;     // before the last step
  std::filesystem::path checkpoint;  // the trained policy (Hugging Face folder; `train --model` takes it)
};

// Runs the warm start and writes out_dir (refused when out_dir already holds a checkpoint: a
// finished warm start is never overwritten). Errors name the file, field or value.
common::Expected<SftSummary> run_sft(const SftConfig& config);

}  // namespace kernelrl::train
