// `kernelrl train`: the multi-turn GRPO loop on one machine (DESIGN.md, "The recipe"). Each step
// takes a batch of tasks, samples m x n episodes per task with the in-process policy (or a sampler
// given to run_training) through the rollout runner (prompts, parsing, evaluation through the
// engine's pool, scores, returns and advantages), then updates the policy on every turn's own
// response tokens. Each step's rollout is kept under the run directory (so `kernelrl report` reads
// it), each step appends a line of metrics to train_log.jsonl, and a checkpoint after every step
// lets a killed run resume. With a held-out split (train/heldout.hpp) the policy is also evaluated
// there before the first step (a line of step 0), every K steps and after the last, into the same
// log (`heldout/...` keys).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "rollout/evaluator.hpp"
#include "rollout/rollout_config.hpp"
#include "policy/local_policy.hpp"
#include "policy/policy.hpp"
#include "train/heldout.hpp"
#include "train/rank_group.hpp"
#include "train/update.hpp"

namespace kernelrl::train {

struct TrainConfig {
  std::filesystem::path model;      // .gguf or Hugging Face folder (the starting policy)
  std::filesystem::path tokenizer;  // empty: from `model`
  std::string device = "auto";      // policy device: cuda, cpu or auto
  std::filesystem::path run_dir;    // train.json, train_log.jsonl, steps/, checkpoints/
  int n_steps = 10;                 // training steps (batches)
  int tasks_per_step = 8;           // Kevin: 8 tasks x 16 x 4 = 512 samples per batch
  std::uint64_t seed = 1;           // task order, sampling, minibatch order
  double lr = 2e-6;                 // AdamW learning rate (Kevin: 2e-6)
  double weight_decay = 0.0;        // AdamW weight decay
  double adam_beta1 = 0.9, adam_beta2 = 0.999;
  bool activation_checkpointing = true;  // recompute each layer in backward
  std::string reward = "kernel";    // "kernel": the engine's score; "format": FormatRewardEvaluator
  rollout::RolloutConfig rollout;   // tasks, split, format, m, n, scores, returns, advantages, prompts
  policy::LocalPolicyConfig policy;         // sampling (temperature 0.9, max_new_tokens) and batching
  UpdateConfig update;              // GRPO clip, Dr. GRPO length, minibatches, grad clip, micro-batch size
  HeldOutConfig heldout;            // evaluation on another split during the run (off by default)
};

// What train.json records: every setting of `config` (src/train/settings.cpp derives it member
// by member, so none can be left out); a resumed run must have the same but n_steps (errors name
// the field, e.g. `rollout.return.kind`).
nlohmann::json describe(const TrainConfig& config);

// Content digests of the files a run's samples depend on: the model (every file of its folder),
// the tokenizer, the prompt templates and the one-shot example. An Error names a file that cannot
// be read.
common::Expected<nlohmann::json> describe_files(const TrainConfig& config);

struct TrainSummary {
  int steps_done_before = 0;  // steps a previous run had finished (resumed)
  int steps_run = 0;
  double first_reward = 0, last_reward = 0;  // mean reward of the first and last step run
};

// Runs or resumes the training in config.run_dir. `evaluator` scores candidates when reward is
// "kernel" (the engine's pool, or the evaluation service's client); it may be null for "format".
// Errors: bad configuration (naming the field), a run directory of other settings, unreadable
// model, or a failed step (the run stops after writing what it finished; rerunning resumes).
//
// `sampler`: what the rollouts sample from instead of the model being trained (null, the default:
// the model itself through a LocalPolicy). It is for driving the trainer with a fixed or external
// sampler (tests: a ScriptedPolicy's fixed answers, which a tiny random model never writes); the
// model is still updated on its answers, as if it had written them. An answer that carries no token
// ids is encoded with the model's tokenizer (its content, ending with the end-of-turn token when it
// stopped) and its log-probs, which are not of those tokens, are dropped: the update recomputes the
// old policy's own and only compares the sampler's. Not owned; its prompts must fit the model's
// context (its own token budget is what the rollout keeps them to).
//
// `ranks` (data parallel; null: one process does everything, the old path): this process is one rank
// of ranks->rank_info().world_size, each running run_training with the same config. Each step's
// tasks (GRPO groups, whole) are shared out by rank_share; a rank rolls out only its own into
// RUN/steps/step-NNNNN/rank-R/ (its trajectories shard; one process writes RUN/steps/step-NNNNN/),
// and trains on its own samples with gradients summed over the ranks before every optimiser step,
// the seeded minibatch split made over the whole batch (update.hpp, RankBatch); the step log's
// metrics are the whole step's. Only rank 0 writes train.json, train_log.jsonl, the checkpoints,
// the run state and the held-out evaluations; every rank resumes from the same checkpoint. The
// result equals one process's when the ranks sample the same answers (a scripted sampler); the
// model's own sampler draws each rank's batch from its own stream, so the samples then differ.
common::Expected<TrainSummary> run_training(const TrainConfig& config, rollout::Evaluator* evaluator,
                                            policy::Policy* sampler = nullptr, RankGroup* ranks = nullptr);

}  // namespace kernelrl::train
