// The model on CUDA against itself on the CPU: the flash / memory-efficient attention paths,
// the fused RMSNorm, bfloat16, autocast training with checkpointing, and the sampler's CUDA
// generator. Label `gpu`; without a CUDA device every test is skipped and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include <torch/cuda.h>

#include "model/autocast.hpp"
#include "model/decode_graph.hpp"
#include "model/kv_cache.hpp"
#include "model/sampler.hpp"
#include "model_test_util.hpp"

namespace kernelrl::model {
namespace {

using testing::random_ids;
using testing::tiny_config;
using testing::tiny_model;

#define REQUIRE_CUDA()                                                          \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped"

const torch::Device cuda(torch::kCUDA, 0);

// SmolLM2's attention shape (head_dim 64, 9 query / 3 kv heads), shallow and narrow.
weights::ModelConfig smol_shape() {
  auto c = tiny_config(true);
  c.vocab_size = 300;
  c.hidden_size = 576;
  c.intermediate_size = 256;
  c.n_heads = 9;
  c.n_kv_heads = 3;
  c.head_dim = 64;
  c.rope_theta = 100000.0;
  c.max_position = 1024;
  return c;
}

// A model of that shape whose layers have the tiny models' gain: matrices N(0, 0.3 * sqrt(32 / 576)).
// With N(0, 0.3) at width 576 every projection multiplies by ~7, attention saturates and the
// logits become so ill-conditioned that the CPU's own float32 differs from float64 by 2.5e-3 and
// bfloat16 by 12 of 34 (measured 2026-11-30): the tests would measure that, not the CUDA paths.
Transformer smol_model() {
  return tiny_model(smol_shape(), torch::kFloat32, 1, 0.3 * std::sqrt(32.0 / 576.0));
}

double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kCPU, torch::kFloat64) - b.to(torch::kCPU, torch::kFloat64)).abs().max().item<double>();
}

TEST(ModelGpu, ForwardMatchesTheCpuInFloat32AndBfloat16) {
  REQUIRE_CUDA();
  torch::NoGradGuard no_grad;
  auto model = smol_model();
  auto ids = random_ids(3, 200, 300);
  auto reference = model->forward(ids);
  model->to(cuda);
  EXPECT_LT(max_abs(model->forward(ids.to(cuda)), reference), 1e-3);
  model->to(torch::kBFloat16);
  auto bf16 = model->forward(ids.to(cuda));
  EXPECT_EQ(bf16.scalar_type(), torch::kBFloat16);
  EXPECT_LT(max_abs(bf16, reference), 0.1 * reference.abs().max().item<double>());
}

TEST(ModelGpu, CachedLeftPaddedDecodingMatchesFullForward) {
  REQUIRE_CUDA();
  torch::NoGradGuard no_grad;
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    auto model = smol_model();
    model->to(cuda, dtype);
    const std::int64_t width = 40, n_new = 6;
    auto ids = random_ids(2, width + n_new, 300).to(cuda);
    auto full0 = model->forward(ids.narrow(0, 0, 1));                             // row 0 unpadded
    auto full1 = model->forward(ids.narrow(0, 1, 1).narrow(1, 15, width + n_new - 15));  // row 1: 15 pads
    auto mask = torch::ones({2, width}, torch::kInt64);
    mask.index_put_({1, torch::indexing::Slice(0, 15)}, 0);
    auto positions = (mask.cumsum(1) - 1).clamp_min(0);
    KvCache cache(model->config(), 2, width + n_new, torch::TensorOptions().device(cuda).dtype(dtype));
    auto prefill = model->forward(ids.narrow(1, 0, width), positions.to(cuda), &cache, mask.to(cuda));
    const double tol = dtype == torch::kFloat32 ? 1e-3 : 0.1 * full0.abs().max().item<double>();
    EXPECT_LT(max_abs(prefill[0], full0[0].narrow(0, 0, width)), tol);
    EXPECT_LT(max_abs(prefill[1].narrow(0, 15, width - 15), full1[0].narrow(0, 0, width - 15)), tol);
    auto pos = positions.select(1, width - 1).to(cuda).unsqueeze(1);
    for (std::int64_t i = 0; i < n_new; ++i) {
      auto step = model->forward(ids.narrow(1, width + i, 1), pos + 1 + i, &cache);
      EXPECT_LT(max_abs(step[0][0], full0[0][width + i]), tol) << "step " << i;
      EXPECT_LT(max_abs(step[1][0], full1[0][width - 15 + i]), tol) << "step " << i;
    }
  }
}

TEST(ModelGpu, AutocastTrainingWithCheckpointingMatchesWithout) {
  REQUIRE_CUDA();
  auto model = smol_model();
  model->to(cuda);
  auto ids = random_ids(2, 128, 300).to(cuda);
  auto targets = random_ids(2, 128, 300, 3).to(cuda);
  auto grads = [&](bool checkpointing) {
    model->set_activation_checkpointing(checkpointing);
    model->zero_grad();
    {
      AutocastScope autocast(torch::kCUDA, torch::kBFloat16);
      auto out = model->token_logprobs(ids, targets, {}, {64, true, 1.0});
      (out.logprobs.mean() + 0.1 * out.entropy.mean()).backward();
    }
    return testing::parameter_grads(model);
  };
  auto plain = grads(false);
  auto recomputed = grads(true);
  for (const auto& [name, g] : plain) {
    EXPECT_EQ(g.scalar_type(), torch::kFloat32) << name;
    EXPECT_FALSE(torch::isnan(g).any().item<bool>()) << name;
    EXPECT_LT(max_abs(g, recomputed[name]), 1e-3 * (1 + g.abs().max().item<double>())) << name;
  }
}

TEST(ModelGpu, SamplerIsGreedyExactSeededAndRecordsLogprobs) {
  REQUIRE_CUDA();
  auto model = smol_model();
  const std::vector<std::vector<std::int64_t>> prompts{{1, 2, 3, 4, 5, 6, 7}, {8, 9}};
  SamplingParams greedy;
  greedy.temperature = 0.0;
  greedy.max_new_tokens = 12;
  auto on_cpu = generate(model, prompts, greedy);
  model->to(cuda);
  auto on_gpu = generate(model, prompts, greedy);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.error().message;
  // Float32 on both: the same greedy tokens unless two logits nearly tie.
  EXPECT_EQ((*on_gpu)[0].token_ids, (*on_cpu)[0].token_ids);
  EXPECT_EQ((*on_gpu)[1].token_ids, (*on_cpu)[1].token_ids);

  model->to(torch::kBFloat16);
  SamplingParams params;
  params.max_new_tokens = 32;
  params.seed = 11;
  auto a = generate(model, prompts, params);
  auto b = generate(model, prompts, params);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ((*a)[0].token_ids, (*b)[0].token_ids);
  EXPECT_EQ((*a)[1].token_ids, (*b)[1].token_ids);
  for (const auto& s : *a) {
    EXPECT_EQ(s.token_ids.size(), 32u);
    for (double lp : s.logprobs) EXPECT_LE(lp, 0.0);
  }
}

// Decoding through the CUDA graph against the eager loop on the same GPU: the same greedy tokens and
// log-probs, with left padding, in float32 and under bfloat16 autocast (the trainer's setting).
TEST(ModelGpu, CudaGraphDecodingMatchesTheEagerLoop) {
  REQUIRE_CUDA();
  if (!cuda_graphs_available()) GTEST_SKIP() << "this build's libtorch has no CUDA graphs";
  auto model = smol_model();
  model->to(cuda);
  const std::vector<std::vector<std::int64_t>> prompts{{1, 2, 3, 4, 5, 6, 7}, {8, 9}, {10, 11, 12, 13}};
  SamplingParams greedy;
  greedy.temperature = 0.0;
  greedy.max_new_tokens = 40;
  for (bool autocast : {false, true}) {
    std::optional<AutocastScope> scope;
    if (autocast) scope.emplace(torch::kCUDA);
    auto eager_params = greedy;
    eager_params.cuda_graphs = false;
    auto eager = generate(model, prompts, eager_params);
    auto graphed = generate(model, prompts, greedy);
    ASSERT_TRUE(eager.ok()) << eager.error().message;
    ASSERT_TRUE(graphed.ok()) << graphed.error().message;
    for (std::size_t r = 0; r < prompts.size(); ++r) {
      const auto& e = (*eager)[r];
      const auto& g = (*graphed)[r];
      EXPECT_EQ(g.token_ids, e.token_ids) << "row " << r << (autocast ? " (autocast)" : "");
      ASSERT_EQ(g.logprobs.size(), e.logprobs.size());
      for (std::size_t i = 0; i < e.logprobs.size(); ++i) {
        EXPECT_NEAR(g.logprobs[i], e.logprobs[i], autocast ? 0.05 : 1e-4) << "row " << r << " token " << i;
      }
    }
  }
  // A second call captures its own graph (a new cache): the same tokens again.
  auto again = generate(model, prompts, greedy);
  auto first = generate(model, prompts, greedy);
  ASSERT_TRUE(again.ok() && first.ok());
  EXPECT_EQ((*again)[1].token_ids, (*first)[1].token_ids);
}

}  // namespace
}  // namespace kernelrl::model
