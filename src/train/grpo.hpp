// The GRPO policy-gradient objective (DESIGN.md, "Optimiser side"), per token: the clipped
// importance-weighted advantage with asymmetric clipping (DAPO's clip-higher: eps_low 0.2,
// eps_high 0.28), an optional KL penalty to a reference policy (k3 estimator, coefficient 0 by
// default), and Dr. GRPO's constant normaliser: the summed token losses are divided by
// n_sequences * max_response_tokens, not by each response's length, so long junk responses are
// not favoured. Pure function of tensors; the diagnostics come back as numbers.
#pragma once

#include <torch/types.h>

namespace kernelrl::train {

struct GrpoConfig {
  double eps_low = 0.2;               // ratio clipped below at 1 - eps_low
  double eps_high = 0.28;             // ratio clipped above at 1 + eps_high
  double kl_coef = 0.0;               // weight of the k3 KL estimate to the reference policy (the
                                      // frozen starting policy; update_policy needs it when > 0)
  std::int64_t max_response_tokens = 1024;  // Dr. GRPO's constant length L in the normaliser
  // Truncated importance sampling for the sampler/trainer mismatch: the tokens come from the
  // sampler's decode path and the ratio above from the trainer's full-sequence forward, so each
  // token's policy-gradient term is weighted by min(p_old / p_sampler, tis_cap) (no gradient through
  // it). 0: no correction.
  double tis_cap = 2.0;
};

struct GrpoInputs {
  torch::Tensor logprobs;      // [B, T] log p_theta of the response tokens (differentiable)
  torch::Tensor old_logprobs;  // [B, T] under the policy that sampled them (no grad)
  torch::Tensor advantages;    // [B] one advantage per sequence (per turn)
  torch::Tensor mask;          // [B, T] 1 on the turn's own response tokens, 0 elsewhere
  torch::Tensor ref_logprobs;  // [B, T] reference policy, only when kl_coef > 0
  torch::Tensor sampler_logprobs;  // [B, T] as the sampler reported them (equal to old_logprobs where
                                   // unknown: weight 1); undefined: no correction
  std::int64_t n_sequences = 0;  // the optimiser step's constant share of the configured batch
                                 // (micro-batches add up; not the rows it trains on); 0 = B
};

struct GrpoOutput {
  torch::Tensor loss;       // scalar, to backpropagate
  double clip_frac = 0;     // share of masked tokens whose clipped term was the one taken
  double approx_kl = 0;     // mean over masked tokens of 0.5 * (log ratio)^2, old -> new
  double mean_ratio = 1;    // mean importance ratio over masked tokens
  double kl_to_ref = 0;     // mean k3 estimate to the reference (0 without one)
  double tis_weight = 1;    // mean truncated importance weight over masked tokens (1 without the correction)
  double tis_capped_frac = 0;  // share of masked tokens whose weight was cut at tis_cap
  std::int64_t n_tokens = 0;  // masked tokens
};

// The loss of one (micro-)batch. Shapes must agree; the caller sums gradients over micro-batches
// of the same step (each normalised by the step's n_sequences, so the sum is the step's loss).
GrpoOutput grpo_loss(const GrpoInputs& in, const GrpoConfig& config);

}  // namespace kernelrl::train
