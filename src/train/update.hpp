// One GRPO update of the policy on a batch of scored samples (DESIGN.md, "Optimiser side"): the
// log-probabilities of the sampling policy are recomputed first (the policy before this batch's
// updates, at the rollout's temperature: the distribution the tokens were drawn from), and with a
// KL term those of the frozen reference at the same temperature; then the batch is split into n_minibatches optimiser steps (Kevin: 2), each
// accumulating gradients over micro-batches bounded in tokens, clipping the gradient norm and
// stepping the optimiser. Only each sample's own response tokens are trained on.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/optim/optimizer.h>

#include "common/expected.hpp"
#include "train/grpo.hpp"
#include "train/rank_group.hpp"
#include "train/rank_split.hpp"
#include "model/transformer.hpp"

namespace kernelrl::train {

struct TrainingSample {
  std::vector<std::int64_t> prompt;    // the prompt's tokens as the policy saw them
  std::vector<std::int64_t> response;  // the sampled tokens (trained on)
  double advantage = 0;
  std::vector<double> sampler_logprobs;  // log p of each response token as the sampler reported it
                                         // (empty: unknown): the mismatch diagnostic and grpo.tis_cap's weights
};

struct UpdateConfig {
  GrpoConfig grpo;
  // The rollout's sampling temperature: old and new log-probs are taken under
  // softmax(logits / temperature), the distribution the tokens were drawn from (as verl, TRL and
  // OpenRLHF do); at 1 instead, the importance ratio would compare two other distributions.
  double temperature = 1.0;
  int n_minibatches = 2;                   // optimiser steps per batch: the whole batch is split, seeded
  // Dr. GRPO's constant batch size B: each optimiser step's summed token losses are divided by
  // its share of B (B / n_minibatches sequences) times grpo.max_response_tokens, however many of
  // its samples carry no signal. 0: the number of samples given. The trainer sets the configured
  // batch (tasks per step x m x n).
  std::int64_t n_batch_samples = 0;
  double max_grad_norm = 0.05;             // gradient-norm clip (Kevin: 0.05)
  std::int64_t micro_batch_tokens = 16384; // prompt + response tokens per forward/backward at most
  bool skip_zero_advantage = true;         // samples with advantage 0 add no gradient (kl_coef 0): skipped,
                                           // after the split, so that skipping changes nothing
};

struct UpdateStats {
  double loss = 0;        // mean over the minibatches of their loss (one without trainable samples: 0)
  double clip_frac = 0;   // token-weighted over all trained tokens
  double approx_kl = 0;   // token-weighted
  double kl_to_ref = 0;   // token-weighted k3 estimate of KL(policy || reference); 0 without the KL term
  double entropy = 0;     // mean next-token entropy over trained tokens (nats)
  double grad_norm = 0;   // mean over the optimiser steps taken, before clipping
  std::int64_t n_tokens = 0;       // response tokens trained on
  std::int64_t n_samples = 0;      // samples trained on (after skipping zero advantages)
  int n_optimizer_steps = 0;      // minibatches without a trainable sample take no step
  // |recomputed old log-prob - sampler's log-prob| over the response tokens of samples that carry
  // sampler log-probs: the training-inference mismatch (0 up to rounding when both agree).
  double sampler_logprob_diff_mean = 0;
  double sampler_logprob_diff_max = 0;
  // Truncated importance sampling (grpo.tis_cap): token-weighted mean weight, and share cut at the cap.
  double tis_weight = 1;
  double tis_capped_frac = 0;
  // Mean negative log-probability of the trained response tokens under the policy before the
  // update, at config.temperature (the supervised warm start's loss).
  double response_nll = 0;
};

// The models an update works with; the handles share the modules.
struct UpdateModels {
  model::Transformer policy;              // trained in place
  model::Transformer reference{nullptr};  // the KL term's frozen reference (the starting policy),
                                          // never trained; needed when grpo.kl_coef > 0
  bool bf16_autocast = false;             // forward passes under bfloat16 autocast (CUDA)
};

// A data-parallel rank's part of the step's whole batch: where its samples stand in it
// (rank_split.hpp) and the group that sums gradients and statistics over the ranks. The seeded
// minibatch split is made over the whole batch, so each rank trains, in every minibatch, on its part
// of the minibatch one process would have made; a minibatch no rank has a trainable sample of takes
// no step on any rank.
struct RankBatch {
  RankGroup* group = nullptr;  // not owned; every rank calls update_policy in the same step
  GlobalPlacement placement;   // placement.position.size() == the rank's samples
};

// Updates models.policy in place with `optimizer` (built over its parameters), on the policy's
// device. `seed` orders the samples into minibatches. With `rank_batch` (data parallel), `samples`
// are the rank's part, the gradients are summed over the ranks before every optimiser step and the
// returned statistics are the whole batch's, the same on every rank; without it, they are the whole
// batch. Errors: a KL coefficient without a reference, torch failures (out of memory, ...), a rank
// gone, named.
common::Expected<UpdateStats> update_policy(const UpdateModels& models, torch::optim::Optimizer& optimizer,
                                            std::vector<TrainingSample> samples, const UpdateConfig& config,
                                            std::uint64_t seed, const RankBatch* rank_batch = nullptr);

}  // namespace kernelrl::train
