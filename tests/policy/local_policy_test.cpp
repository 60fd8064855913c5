// The in-process policy under rollout-like load: many threads ask at once, the batching thread
// serves them in several sampler calls (max_batch smaller than the crowd), every caller gets its
// own response with token ids and log-probabilities, and the end-of-turn marker is not in the text.
#include <gtest/gtest.h>

#include <thread>

#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "policy/local_policy.hpp"

namespace kernelrl::policy {
namespace {

const std::filesystem::path kSource = KERNELRL_SOURCE_DIR;

TEST(LocalPolicy, ManyCallersAreServedInSeveralBatches) {
  auto tok = load_tokenizer(kSource / "tests/data/tokenizer/smollm2");
  ASSERT_TRUE(tok) << tok.error().message;
  auto config = model::testing::tiny_config(/*tied=*/true);
  config.vocab_size = 49152;
  config.max_position = 4096;
  torch::manual_seed(5);
  auto made = model::make_transformer(config);
  ASSERT_TRUE(made) << made.error().message;
  PolicyModel policy{*made, std::move(tok->tokenizer), std::move(tok->chat), "tiny", torch::Device(torch::kCPU), false};
  LocalPolicyConfig c;
  c.sampling.max_new_tokens = 24;
  c.sampling.temperature = 1.0;
  c.max_batch = 5;
  c.batch_wait_ms = 1;
  LocalPolicy sampler(policy, c);

  constexpr int kCallers = 23;
  std::vector<common::Expected<PolicyResponse>> replies(kCallers, common::make_error("not called"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] {
      // Prompts of different lengths, so batches are left-padded.
      const std::vector<common::Message> messages{{"system", "You write CUDA kernels."},
                                                   {"user", "Task " + std::to_string(i) + ": " + std::string(10 * i, 'x')}};
      replies[i] = sampler.generate(messages);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kCallers; ++i) {
    ASSERT_TRUE(replies[i]) << i << ": " << replies[i].error().message;
    const auto& r = *replies[i];
    ASSERT_TRUE(r.token_ids.has_value());
    ASSERT_TRUE(r.logprobs.has_value());
    EXPECT_GE(r.token_ids->size(), 1u);
    EXPECT_LE(r.token_ids->size(), 24u);
    EXPECT_EQ(r.token_ids->size(), r.logprobs->size());
    EXPECT_EQ(r.content.find("<|im_end|>"), std::string::npos);
  }
  EXPECT_GE(sampler.n_batches(), kCallers / c.max_batch);
  const auto too_long = sampler.generate({{"user", std::string(40000, 'y')}});
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().message.find("context"), std::string::npos) << too_long.error().message;
}

}  // namespace
}  // namespace kernelrl::policy
