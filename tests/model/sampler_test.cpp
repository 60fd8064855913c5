// Generation against the model itself: greedy equals argmax decoding, stop tokens and strings,
// lengths, top-p, seeds, left padding, the recorded log-probs, and the sampled distribution.
#include "model/sampler.hpp"

#include <gtest/gtest.h>

#include "model_test_util.hpp"

namespace kernelrl::model {
namespace {

using testing::tiny_config;
using testing::tiny_model;

// Token i reads as one letter, 'a' + i % 26, so stop strings can be chosen from greedy output.
std::string letters(std::span<const std::int64_t> ids) {
  std::string s;
  for (auto id : ids) s += static_cast<char>('a' + id % 26);
  return s;
}

// Greedy continuation by full forwards, no cache.
std::vector<std::int64_t> argmax_decode(Transformer& model, std::vector<std::int64_t> ids, int n) {
  torch::NoGradGuard no_grad;
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) {
    auto logits = model->forward(torch::tensor(ids, torch::kInt64).unsqueeze(0));
    const auto next = logits[0][-1].argmax().item<std::int64_t>();
    out.push_back(next);
    ids.push_back(next);
  }
  return out;
}

SamplingParams greedy(std::int64_t n) {
  SamplingParams p;
  p.temperature = 0.0;
  p.max_new_tokens = n;
  return p;
}

TEST(Sampler, GreedyEqualsArgmaxDecodingAlsoWhenLeftPadded) {
  auto model = tiny_model(tiny_config(), torch::kFloat64);
  const std::vector<std::vector<std::int64_t>> prompts{{3, 14, 15, 9, 2, 6}, {5, 3}, {8, 9, 7, 9}};
  auto samples = generate(model, prompts, greedy(8));
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    EXPECT_EQ((*samples)[r].token_ids, argmax_decode(model, prompts[r], 8)) << "row " << r;
    EXPECT_EQ((*samples)[r].finish_reason, "length");
    EXPECT_EQ((*samples)[r].logprobs.size(), 8u);
    EXPECT_EQ((*samples)[r].sampling_logprobs, std::vector<double>(8, 0.0));
  }
  // A single prompt gives the same as its row in the batch.
  auto alone = generate(model, {prompts[1]}, greedy(8));
  EXPECT_EQ((*alone)[0].token_ids, (*samples)[1].token_ids);
}

TEST(Sampler, StopTokensAndStringsEndRowsAndTruncate) {
  auto model = tiny_model(tiny_config(), torch::kFloat64);
  const std::vector<std::int64_t> prompt{1, 2, 3, 4};
  const auto reference = argmax_decode(model, prompt, 12);
  const auto text = letters(reference);

  // A stop string of two letters that first completes at token k (1-based).
  std::size_t k = 3;
  while (text.find(text.substr(k - 2, 2)) != k - 2) ++k;
  auto params = greedy(12);
  params.stop_strings = {"#never#", text.substr(k - 2, 2)};
  auto samples = generate(model, {prompt, prompt}, params, letters);
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  const auto& s = (*samples)[0];
  EXPECT_EQ(s.finish_reason, "stop");
  EXPECT_EQ(s.stop, text.substr(k - 2, 2));
  EXPECT_EQ(s.token_ids, std::vector<std::int64_t>(reference.begin(), reference.begin() + k));
  EXPECT_EQ(s.text, text.substr(0, k));
  EXPECT_EQ(s.logprobs.size(), k);

  // A stop token: the first occurrence of reference[j] ends the row, the token kept.
  params = greedy(12);
  params.stop_token_ids = {reference[4]};
  samples = generate(model, {prompt}, params, letters);
  const auto first = std::find(reference.begin(), reference.end(), reference[4]) - reference.begin();
  EXPECT_EQ((*samples)[0].token_ids, std::vector<std::int64_t>(reference.begin(), reference.begin() + first + 1));
  EXPECT_EQ((*samples)[0].finish_reason, "stop");
  EXPECT_EQ((*samples)[0].stop, "token:" + std::to_string(reference[4]));

  // max_new_tokens bounds the row; 0 generates nothing.
  samples = generate(model, {prompt}, greedy(5));
  EXPECT_EQ((*samples)[0].token_ids.size(), 5u);
  EXPECT_EQ((*samples)[0].finish_reason, "length");
  samples = generate(model, {prompt}, greedy(0));
  EXPECT_TRUE((*samples)[0].token_ids.empty());
}

TEST(Sampler, TinyTopPIsGreedyAndSeedsReproduce) {
  auto model = tiny_model(tiny_config(true), torch::kFloat32);
  const std::vector<std::vector<std::int64_t>> prompts{{7, 8, 9}, {1, 2}};
  SamplingParams params;
  params.temperature = 1.0;
  params.top_p = 1e-6;
  params.max_new_tokens = 10;
  auto nucleus = generate(model, prompts, params);
  auto argmax = generate(model, prompts, greedy(10));
  for (int r = 0; r < 2; ++r) EXPECT_EQ((*nucleus)[r].token_ids, (*argmax)[r].token_ids);
  EXPECT_NEAR((*nucleus)[0].sampling_logprobs[0], 0.0, 1e-6);  // the nucleus holds one token

  params.top_p = 1.0;
  params.seed = 42;
  auto a = generate(model, prompts, params);
  auto b = generate(model, prompts, params);
  params.seed = 43;
  auto c = generate(model, prompts, params);
  EXPECT_EQ((*a)[0].token_ids, (*b)[0].token_ids);
  EXPECT_EQ((*a)[1].token_ids, (*b)[1].token_ids);
  EXPECT_NE((*a)[0].token_ids, (*c)[0].token_ids);
}

TEST(Sampler, LogprobsEqualLogSoftmaxOfAFullForward) {
  auto model = tiny_model(tiny_config(false, true), torch::kFloat64);
  const std::vector<std::vector<std::int64_t>> prompts{{4, 5, 6, 7, 8}, {9, 10}};
  SamplingParams params;
  params.temperature = 0.9;
  params.top_p = 0.8;
  params.max_new_tokens = 6;
  params.seed = 5;
  auto samples = generate(model, prompts, params);
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  torch::NoGradGuard no_grad;
  for (int r = 0; r < 2; ++r) {
    const auto& s = (*samples)[r];
    auto ids = prompts[r];
    ids.insert(ids.end(), s.token_ids.begin(), s.token_ids.end());
    auto logits = model->forward(torch::tensor(ids, torch::kInt64).unsqueeze(0))[0];
    const auto start = static_cast<std::int64_t>(prompts[r].size()) - 1;
    for (std::size_t i = 0; i < s.token_ids.size(); ++i) {
      auto z = logits[start + i];
      const auto token = s.token_ids[i];
      EXPECT_NEAR(s.logprobs[i], z.log_softmax(-1)[token].item<double>(), 1e-5) << "row " << r << " token " << i;
      // Under temperature and top-p: renormalised over the nucleus of softmax(z / 0.9).
      auto p = (z / 0.9).softmax(-1);
      auto [sorted, order] = p.sort(-1, true);
      auto before = sorted.cumsum(-1) - sorted;
      auto nucleus_mass = sorted.masked_select(before < 0.8).sum().item<double>();
      EXPECT_NEAR(s.sampling_logprobs[i], std::log(p[token].item<double>() / nucleus_mass), 1e-5);
    }
  }
}

TEST(Sampler, DrawsFromTheModelsDistribution) {
  auto model = tiny_model(tiny_config(), torch::kFloat32);
  model->reset_parameters(0.05);  // a flat-ish distribution, so many tokens have visible mass
  const std::int64_t n = 4000;
  const std::vector<std::vector<std::int64_t>> prompts(n, std::vector<std::int64_t>{3, 1, 4});
  SamplingParams params;
  params.temperature = 1.0;
  params.max_new_tokens = 1;
  params.seed = 9;
  auto samples = generate(model, prompts, params);
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  torch::NoGradGuard no_grad;
  auto p = model->forward(torch::tensor(prompts[0], torch::kInt64).unsqueeze(0))[0][-1].softmax(-1);
  std::vector<double> counts(50, 0.0);
  for (const auto& s : *samples) counts[s.token_ids[0]] += 1.0 / n;
  for (int v = 0; v < 50; ++v) EXPECT_NEAR(counts[v], p[v].item<double>(), 0.025) << "token " << v;
}

TEST(Sampler, BadRequestsAreErrors) {
  auto model = tiny_model(tiny_config(), torch::kFloat32);
  EXPECT_NE(generate(model, {}, greedy(2)).error().message.find("no prompts"), std::string::npos);
  EXPECT_NE(generate(model, {{1}, {}}, greedy(2)).error().message.find("prompt 1 is empty"), std::string::npos);
  EXPECT_NE(generate(model, {{1, 50}}, greedy(2)).error().message.find("token id 50"), std::string::npos);
  auto params = greedy(2);
  params.stop_strings = {"x"};
  EXPECT_NE(generate(model, {{1}}, params).error().message.find("detokenize"), std::string::npos);
  params = greedy(2);
  params.top_p = 0.0;
  EXPECT_NE(generate(model, {{1}}, params).error().message.find("top_p"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::model
