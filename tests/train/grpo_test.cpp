// The GRPO objective against hand-computed numbers: ratios inside and outside the asymmetric clip
// range, positive and negative advantages, the Dr. GRPO constant normaliser and the diagnostics.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "train/grpo.hpp"

namespace kernelrl::train {
namespace {

torch::Tensor t(std::vector<double> v, std::int64_t rows) {
  return torch::tensor(v, torch::kDouble).reshape({rows, -1});
}

TEST(Grpo, ClippedObjectiveMatchesHandComputedValues) {
  // Row 0 (advantage +1): ratios e^0.1 = 1.10517 (inside [0.8, 1.28]) and e^0.5 = 1.64872 (clipped
  // to 1.28). Row 1 (advantage -2): ratio e^-0.5 = 0.60653 -> clipped to 0.8 but min() keeps the
  // larger loss -2 * 0.8 = -1.6 (clipped term taken); ratio 1 -> -2. The third token of row 1 is masked.
  GrpoInputs in;
  in.logprobs = t({-1.0, -0.5, -3.0, -2.5, -1.0, -7.0}, 2);
  in.old_logprobs = t({-1.1, -1.0, -3.0, -2.0, -1.0, -0.1}, 2);
  in.advantages = torch::tensor({1.0, -2.0}, torch::kDouble);
  in.mask = t({1, 1, 0, 1, 1, 0}, 2);
  GrpoConfig c;
  c.max_response_tokens = 4;
  const GrpoOutput out = grpo_loss(in, c);
  // Row 0: -(1.10517 + 1.28); row 1: -(-1.6) - (-2) = 3.6. Sum 1.21483 / (2 sequences * 4) = 0.151854.
  const double expected = (-(std::exp(0.1) + 1.28) + 1.6 + 2.0) / 8.0;
  EXPECT_NEAR(out.loss.item<double>(), expected, 1e-12);
  EXPECT_EQ(out.n_tokens, 4);
  EXPECT_NEAR(out.clip_frac, 2.0 / 4.0, 1e-12);  // the e^0.5 token and the e^-0.5 token
  EXPECT_NEAR(out.approx_kl, 0.5 * (0.01 + 0.25 + 0.25 + 0) / 4.0, 1e-12);
  EXPECT_NEAR(out.mean_ratio, (std::exp(0.1) + std::exp(0.5) + std::exp(-0.5) + 1) / 4.0, 1e-12);
}

TEST(Grpo, GradientFlowsOnlyThroughUnclippedMaskedTokens) {
  auto lp = t({-1.0, -0.5, -3.0}, 1).requires_grad_(true);
  GrpoInputs in;
  in.logprobs = lp;
  in.old_logprobs = t({-1.1, -1.0, -3.0}, 1);
  in.advantages = torch::tensor({1.0}, torch::kDouble);
  in.mask = t({1, 1, 0}, 1);
  GrpoConfig c;
  c.max_response_tokens = 2;
  grpo_loss(in, c).loss.backward();
  auto g = lp.grad();
  // d/dlp of -ratio * A / (1 * 2) = -e^0.1 / 2 for the unclipped token; 0 for the clipped and masked ones.
  EXPECT_NEAR(g[0][0].item<double>(), -std::exp(0.1) / 2, 1e-12);
  EXPECT_EQ(g[0][1].item<double>(), 0.0);
  EXPECT_EQ(g[0][2].item<double>(), 0.0);
}

TEST(Grpo, MicroBatchesOfOneStepAddUpToTheWholeBatch) {
  GrpoInputs whole;
  whole.logprobs = t({-1.0, -0.2, -2.0, -0.7}, 2);
  whole.old_logprobs = t({-1.2, -0.2, -1.9, -0.9}, 2);
  whole.advantages = torch::tensor({0.5, -1.5}, torch::kDouble);
  whole.mask = t({1, 1, 1, 0}, 2);
  GrpoConfig c;
  const double all = grpo_loss(whole, c).loss.item<double>();
  double parts = 0;
  for (int r = 0; r < 2; ++r) {
    GrpoInputs part;
    part.logprobs = whole.logprobs.slice(0, r, r + 1);
    part.old_logprobs = whole.old_logprobs.slice(0, r, r + 1);
    part.advantages = whole.advantages.slice(0, r, r + 1);
    part.mask = whole.mask.slice(0, r, r + 1);
    part.n_sequences = 2;
    parts += grpo_loss(part, c).loss.item<double>();
  }
  EXPECT_NEAR(parts, all, 1e-12);
}

TEST(Grpo, KlPenaltyUsesTheK3Estimator) {
  GrpoInputs in;
  in.logprobs = t({-1.0}, 1);
  in.old_logprobs = t({-1.0}, 1);
  in.ref_logprobs = t({-1.5}, 1);
  in.advantages = torch::tensor({0.0}, torch::kDouble);
  in.mask = t({1}, 1);
  GrpoConfig c;
  c.kl_coef = 0.1;
  c.max_response_tokens = 1;
  const GrpoOutput out = grpo_loss(in, c);
  const double k3 = std::exp(-0.5) + 0.5 - 1;  // exp(ref - lp) - (ref - lp) - 1
  EXPECT_NEAR(out.kl_to_ref, k3, 1e-12);
  EXPECT_NEAR(out.loss.item<double>(), 0.1 * k3, 1e-12);
}

// Truncated importance sampling: each token's policy-gradient term times min(p_old / p_sampler,
// cap), with no gradient through the weight; the KL term is not weighted; cap 0 turns it off.
TEST(Grpo, TruncatedImportanceSamplingWeightsEachTokenByTheCappedSamplerRatio) {
  auto lp = t({-1.0, -2.0, -0.5}, 1).requires_grad_(true);
  GrpoInputs in;
  in.logprobs = lp;
  in.old_logprobs = t({-1.0, -2.0, -0.5}, 1);  // ratio 1: the unclipped term -A on every token
  in.sampler_logprobs = t({-1.0, -2.3, -3.0}, 1);  // weights 1, e^0.3 = 1.34986, e^2.5 -> cap 2
  in.advantages = torch::tensor({1.0}, torch::kDouble);
  in.mask = t({1, 1, 1}, 1);
  GrpoConfig c;
  c.max_response_tokens = 3;
  const GrpoOutput out = grpo_loss(in, c);
  EXPECT_NEAR(out.loss.item<double>(), -(1 + std::exp(0.3) + 2.0) / 3.0, 1e-12);
  EXPECT_NEAR(out.tis_weight, (1 + std::exp(0.3) + 2.0) / 3.0, 1e-12);
  EXPECT_NEAR(out.tis_capped_frac, 1.0 / 3.0, 1e-12);
  out.loss.backward();
  EXPECT_NEAR(lp.grad()[0][1].item<double>(), -std::exp(0.3) / 3.0, 1e-12);  // d(-w * ratio)/dlp, w constant
  c.tis_cap = 0;
  lp.grad().zero_();
  const GrpoOutput off = grpo_loss(in, c);
  EXPECT_NEAR(off.loss.item<double>(), -1.0, 1e-12);
  EXPECT_EQ(off.tis_weight, 1.0);
}

}  // namespace
}  // namespace kernelrl::train
