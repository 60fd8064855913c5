// update_policy against what the recipe asks of it, on the CPU with a tiny random model whose
// logits are peaked enough for the temperature to matter: the old and new log-probabilities are
// those of the distribution the sampler drew from (softmax(logits / temperature)).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "model/sampler.hpp"
#include "train/update.hpp"

namespace kernelrl::train {
namespace {

constexpr double kTemperature = 0.6;

weights::ModelConfig tiny_config() {
  auto c = model::testing::tiny_config(/*tied=*/true);
  c.max_position = 64;
  return c;
}

// The same random model on every call (float32, as the sampler runs on the CPU).
model::Transformer tiny_model() { return model::testing::tiny_model(tiny_config(), torch::kFloat32, 11, 0.3); }

// `n` samples drawn at kTemperature from `m`, with the sampler's log-probs and alternating advantages.
std::vector<TrainingSample> sampled(model::Transformer& m, int n) {
  model::SamplingParams params;
  params.temperature = kTemperature;
  params.max_new_tokens = 6;
  params.seed = 5;
  std::vector<std::vector<std::int64_t>> prompts;
  for (int i = 0; i < n; ++i) prompts.push_back({1, 2 + i, 3, 4 + 2 * i});
  auto drawn = model::generate(m, prompts, params);
  EXPECT_TRUE(drawn) << drawn.error().message;
  std::vector<TrainingSample> samples;
  for (int i = 0; i < n && drawn; ++i) {
    samples.push_back({prompts[i], (*drawn)[i].token_ids, i % 2 == 0 ? 1.0 : -0.5, (*drawn)[i].sampling_logprobs});
  }
  return samples;
}

UpdateConfig one_step(double temperature) {
  UpdateConfig c;
  c.temperature = temperature;
  c.n_minibatches = 1;
  c.max_grad_norm = 1e9;  // no clipping: the step is the plain gradient
  c.grpo.max_response_tokens = 6;
  return c;
}

TEST(Update, OldLogprobsAreTheSamplersAtItsTemperature) {
  auto m = tiny_model();
  const auto samples = sampled(m, 4);
  ASSERT_EQ(samples.size(), 4u);
  torch::optim::SGD optimizer(m->parameters(), torch::optim::SGDOptions(0.0));

  auto at_sampling = update_policy({m}, optimizer, samples, one_step(kTemperature), 0);
  ASSERT_TRUE(at_sampling) << at_sampling.error().message;
  EXPECT_LT(at_sampling->sampler_logprob_diff_max, 1e-4);  // the ratio starts at exactly the sampler's distribution
  EXPECT_EQ(at_sampling->clip_frac, 0.0);
  EXPECT_LT(at_sampling->approx_kl, 1e-12);  // one minibatch: the ratio is 1 up to rounding

  // The check can tell: at temperature 1 the recomputed log-probs are another distribution's.
  auto at_one = update_policy({m}, optimizer, samples, one_step(1.0), 0);
  ASSERT_TRUE(at_one) << at_one.error().message;
  EXPECT_GT(at_one->sampler_logprob_diff_max, 0.05);
}

TEST(Update, TheGradientIsThatOfTheTemperedLogprobs) {
  // One SGD step on one sample at ratio 1: delta = -lr * grad(-A * sum_k log p_T(y_k) / L).
  auto m = tiny_model();
  const auto samples = sampled(m, 1);
  ASSERT_EQ(samples.size(), 1u);
  const TrainingSample& s = samples[0];
  constexpr double kLr = 0.1;

  auto reference = tiny_model();
  std::vector<std::int64_t> seq(s.prompt);
  seq.insert(seq.end(), s.response.begin(), s.response.end());
  const auto n = static_cast<std::int64_t>(seq.size());
  auto ids = torch::tensor(std::vector<std::int64_t>(seq.begin(), seq.end() - 1), torch::kLong).unsqueeze(0);
  auto targets = torch::tensor(std::vector<std::int64_t>(seq.begin() + 1, seq.end()), torch::kLong).unsqueeze(0);
  auto mask = torch::zeros({1, n - 1});
  mask.slice(1, static_cast<std::int64_t>(s.prompt.size()) - 1).fill_(1);
  model::TokenLogprobsOptions options;
  options.temperature = kTemperature;
  auto lp = reference->token_logprobs(ids, targets, mask, options).logprobs;
  (-s.advantage * (lp * mask).sum() / 6.0).backward();
  const auto expected_grads = model::testing::parameter_grads(reference);

  std::map<std::string, torch::Tensor> start;
  for (const auto& [name, t] : m->state()) start[name] = t.clone();
  torch::optim::SGD optimizer(m->parameters(), torch::optim::SGDOptions(kLr));
  auto stats = update_policy({m}, optimizer, samples, one_step(kTemperature), 0);
  ASSERT_TRUE(stats) << stats.error().message;
  ASSERT_EQ(stats->n_optimizer_steps, 1);
  for (const auto& [name, now] : m->state()) {
    const auto delta = now - start.at(name);
    EXPECT_TRUE(torch::allclose(delta, -kLr * expected_grads.at(name), 1e-4, 1e-6)) << name;
  }
}

// Dr. GRPO's normaliser is the configured batch x L: the same two signal-carrying samples give
// the same loss whether six zero-advantage samples come with them or not, and at the first
// minibatch (ratio 1) that loss is -sum_i A_i |y_i| / (B L).
TEST(Update, TheNormaliserIsTheConfiguredBatchWhateverShareCarriesNoSignal) {
  auto m = tiny_model();
  const auto drawn = sampled(m, 8);
  ASSERT_EQ(drawn.size(), 8u);
  std::vector<TrainingSample> signal(drawn.begin(), drawn.begin() + 2);
  std::vector<TrainingSample> with_zeros = signal;
  for (std::size_t i = 2; i < 8; ++i) {
    with_zeros.push_back(drawn[i]);
    with_zeros.back().advantage = 0;
  }
  UpdateConfig c = one_step(kTemperature);
  c.n_batch_samples = 8;
  torch::optim::SGD optimizer(m->parameters(), torch::optim::SGDOptions(0.0));
  auto alone = update_policy({m}, optimizer, signal, c, 0);
  auto diluted = update_policy({m}, optimizer, with_zeros, c, 0);
  ASSERT_TRUE(alone) << alone.error().message;
  ASSERT_TRUE(diluted) << diluted.error().message;
  const double expected = -(signal[0].advantage * static_cast<double>(signal[0].response.size()) +
                            signal[1].advantage * static_cast<double>(signal[1].response.size())) / (8.0 * 6.0);
  EXPECT_NEAR(alone->loss, expected, 1e-6);
  EXPECT_NEAR(diluted->loss, expected, 1e-6);
  // float32 sums over a different number of rows: equal to a few ulps of the norm (a wrong
  // normaliser would scale it by 8/2).
  EXPECT_NEAR(alone->grad_norm, diluted->grad_norm, 1e-5 * alone->grad_norm);
  EXPECT_EQ(diluted->n_samples, 2);  // the zero-advantage ones are skipped
}

// Skipping zero-advantage samples is only a saving: with two minibatches, the same seed and the
// same optimiser, the model ends up the same with and without it (before, the zero-advantage
// samples were dropped before the split, so both the minibatches and their normalisers changed).
TEST(Update, SkippingZeroAdvantagesChangesNothing) {
  std::map<std::string, torch::Tensor> after[2];
  for (int skip = 0; skip < 2; ++skip) {
    auto m = tiny_model();
    auto samples = sampled(m, 8);
    ASSERT_EQ(samples.size(), 8u);
    for (std::size_t i = 0; i < samples.size(); i += 3) samples[i].advantage = 0;
    UpdateConfig c = one_step(kTemperature);
    c.n_minibatches = 2;
    c.skip_zero_advantage = skip == 1;
    torch::optim::SGD optimizer(m->parameters(), torch::optim::SGDOptions(0.5));  // linear: rounding stays rounding
    auto stats = update_policy({m}, optimizer, samples, c, 3);
    ASSERT_TRUE(stats) << stats.error().message;
    EXPECT_EQ(stats->n_samples, skip ? 5 : 8);
    for (const auto& [name, t] : m->state()) after[skip][name] = t.clone();
  }
  for (const auto& [name, t] : after[0]) EXPECT_TRUE(torch::allclose(t, after[1].at(name), 1e-5, 1e-6)) << name;
}

// With a KL coefficient and advantages 0, only the k3 term acts: it is exactly 0 against an
// identical reference, positive against another one, shrinks as the policy is pulled towards
// it, and the reference itself never moves.
TEST(Update, TheKlTermPullsThePolicyTowardsTheFrozenReference) {
  auto m = tiny_model();
  auto samples = sampled(m, 4);
  ASSERT_EQ(samples.size(), 4u);
  for (auto& s : samples) s.advantage = 0;
  UpdateConfig c = one_step(kTemperature);
  c.grpo.kl_coef = 1.0;
  torch::optim::AdamW optimizer(m->parameters(), torch::optim::AdamWOptions(2e-2).weight_decay(0));

  auto same = tiny_model();
  auto against_itself = update_policy({m, same}, optimizer, samples, c, 0);
  ASSERT_TRUE(against_itself) << against_itself.error().message;
  EXPECT_LT(against_itself->kl_to_ref, 1e-9);  // 0 up to the rounding of differently padded batches
  EXPECT_EQ(against_itself->n_samples, 4);  // zero advantages are not skipped: the KL term has a gradient

  auto reference = model::testing::tiny_model(tiny_config(), torch::kFloat32, 12, 0.3);
  const auto reference_before = reference->state().at("model.embed_tokens.weight").clone();
  std::vector<double> kl;
  for (int step = 0; step < 6; ++step) {
    auto stats = update_policy({m, reference}, optimizer, samples, c, step);
    ASSERT_TRUE(stats) << stats.error().message;
    kl.push_back(stats->kl_to_ref);
  }
  EXPECT_GT(kl.front(), 0.01);
  EXPECT_LT(kl.back(), 0.8 * kl.front()) << "KL " << kl.front() << " -> " << kl.back();
  EXPECT_TRUE(torch::equal(reference_before, reference->state().at("model.embed_tokens.weight")));

  auto without = update_policy({m}, optimizer, samples, c, 0);
  ASSERT_FALSE(without);
  EXPECT_NE(without.error().message.find("reference"), std::string::npos) << without.error().message;
}

}  // namespace
}  // namespace kernelrl::train
