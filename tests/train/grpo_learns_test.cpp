// GRPO end to end on a synthetic task, on the CPU with a tiny random model: from a fixed prompt the
// policy samples one token per episode and only one completion (token 7) is rewarded. Sampling,
// group-normalised advantages (rl::advantages) and update_policy must raise p(7 | prompt) from
// about 1/16 to more than 0.5 within a bounded number of steps.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "model/sampler.hpp"
#include "rl/rewards.hpp"
#include "train/update.hpp"

namespace kernelrl::train {
namespace {

weights::ModelConfig tiny_config() {
  auto c = model::testing::tiny_config(/*tied=*/true);
  c.vocab_size = 16;
  c.max_position = 64;
  return c;
}

double probability_of(model::Transformer& m, const std::vector<std::int64_t>& prompt, std::int64_t token) {
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor(prompt, torch::kLong).unsqueeze(0);
  auto logits = m->forward_last(ids);
  return torch::softmax(logits.to(torch::kDouble), -1)[0][token].item<double>();
}

TEST(GrpoLearns, TheRewardedCompletionBecomesLikely) {
  torch::manual_seed(0);
  auto made = model::make_transformer(tiny_config());
  ASSERT_TRUE(made) << made.error().message;
  model::Transformer m = *made;
  const std::vector<std::int64_t> prompt{1, 2, 3};
  constexpr std::int64_t kRewarded = 7;
  const double p0 = probability_of(m, prompt, kRewarded);
  ASSERT_LT(p0, 0.2);

  torch::optim::AdamW optimizer(m->parameters(), torch::optim::AdamWOptions(3e-2).weight_decay(0));
  UpdateConfig config;
  config.grpo.max_response_tokens = 1;
  config.max_grad_norm = 1.0;
  model::SamplingParams sampling;
  sampling.temperature = 1.0;
  sampling.max_new_tokens = 1;
  constexpr int kGroup = 16;
  double p = p0;
  int step = 0;
  for (; step < 40 && p < 0.5; ++step) {
    sampling.seed = 100 + step;
    auto samples = model::generate(m, std::vector<std::vector<std::int64_t>>(kGroup, prompt), sampling);
    ASSERT_TRUE(samples) << samples.error().message;
    std::vector<std::vector<double>> returns;
    for (const auto& s : *samples) returns.push_back({s.token_ids.at(0) == kRewarded ? 1.0 : 0.0});
    const auto advantages = rl::advantages(returns);
    std::vector<TrainingSample> batch;
    for (int i = 0; i < kGroup; ++i) {
      batch.push_back({prompt, (*samples)[i].token_ids, advantages[i][0], (*samples)[i].sampling_logprobs});
    }
    auto stats = update_policy({m}, optimizer, batch, config, step);
    ASSERT_TRUE(stats) << stats.error().message;
    p = probability_of(m, prompt, kRewarded);
  }
  std::printf("p(rewarded) %.4f -> %.4f after %d steps\n", p0, p, step);
  EXPECT_GT(p, 0.5) << "after " << step << " steps";
}

TEST(GrpoLearns, ZeroAdvantagesLeaveTheModelUnchanged) {
  torch::manual_seed(1);
  auto made = model::make_transformer(tiny_config());
  ASSERT_TRUE(made);
  model::Transformer m = *made;
  const auto before = m->state().at("model.embed_tokens.weight").clone();
  torch::optim::AdamW optimizer(m->parameters(), torch::optim::AdamWOptions(1e-2));
  std::vector<TrainingSample> batch{{{1, 2}, {5, 6}, 0.0, {}}, {{1, 2}, {4}, 0.0, {}}};
  auto stats = update_policy({m}, optimizer, batch, UpdateConfig{}, 0);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->n_samples, 0);
  EXPECT_TRUE(torch::equal(before, m->state().at("model.embed_tokens.weight")));
}

}  // namespace
}  // namespace kernelrl::train
