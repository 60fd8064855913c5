// The model on CUDA against itself on the CPU: the flash / memory-efficient attention paths,
// the fused RMSNorm, bfloat16, autocast training with checkpointing, and the sampler's CUDA
// generator, the model's decode attention kernel. Label `gpu`; without a CUDA device every test is
// skipped and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include <ATen/Context.h>
#include <torch/cuda.h>

#include "model/autocast.hpp"
#include "model/decode_kernels.hpp"
#include "model/decode_graph.hpp"
#include "model/kv_cache.hpp"
#include "model/layers.hpp"
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

// Attention of q [B, 1, H, D] over k, v [B, H_kv, L, D] in float64: key j allowed where
// `allowed` [B, 1, 1, L] (undefined: all) and j <= last (negative: no limit).
torch::Tensor reference_decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                         const torch::Tensor& allowed, std::int64_t last) {
  const auto b = q.size(0), h = q.size(2), d = q.size(3), l = k.size(2);
  const auto group = h / k.size(1);
  auto qd = q.to(torch::kFloat64).squeeze(1);
  auto kd = k.to(torch::kFloat64).repeat_interleave(group, 1);
  auto vd = v.to(torch::kFloat64).repeat_interleave(group, 1);
  auto scores = at::einsum("bhd,bhld->bhl", {qd, kd}) / std::sqrt(static_cast<double>(d));
  auto bools = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  auto keep = allowed.defined() ? allowed.reshape({b, 1, l}) : torch::ones({b, 1, l}, bools);
  if (last >= 0) keep = keep & (torch::arange(l, bools.dtype(torch::kInt64)) <= last).view({1, 1, l});
  scores = scores.masked_fill(keep.logical_not(), -std::numeric_limits<double>::infinity());
  return at::einsum("bhl,bhld->bhd", {scores.softmax(-1), vd}).reshape({b, 1, h * d});
}

// The kernel on the layouts decoding gives it (q a view of the fused q/k projection, keys a prefix
// of a larger cache), with left padding (row 2's first 128-key chunk entirely masked), a last slot
// before the end, grouped heads, head_dim 64 (the tensor-core variant in 16-bit dtypes) and 128,
// in each float dtype.
TEST(ModelGpu, DecodeAttentionKernelMatchesFloat64Attention) {
  REQUIRE_CUDA();
  if (!decode_kernels_built()) GTEST_SKIP() << "this build has no model CUDA kernels: decode attention test skipped";
  torch::NoGradGuard no_grad;
  struct Shape {
    std::int64_t h, h_kv, d;
  };
  const std::int64_t b = 3, capacity = 768, l = 700;
  for (auto dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    const double tol = dtype == torch::kFloat32 ? 1e-4 : dtype == torch::kFloat16 ? 1e-2 : 3e-2;
    for (const Shape& s : {Shape{9, 3, 64}, Shape{4, 4, 128}, Shape{16, 2, 64}, Shape{8, 1, 128}}) {
      const auto options = torch::TensorOptions().device(cuda).dtype(dtype);
      auto qk = torch::randn({b, 1, s.h + s.h_kv, s.d}, options);
      auto q = qk.narrow(2, 0, s.h);
      auto k = torch::randn({b, s.h_kv, capacity, s.d}, options).narrow(2, 0, l);
      auto v = torch::randn({b, s.h_kv, capacity, s.d}, options).narrow(2, 0, l);
      auto mask = torch::ones({b, capacity}, options.dtype(torch::kBool));
      mask.index_put_({1, torch::indexing::Slice(0, 37)}, false);
      mask.index_put_({2, torch::indexing::Slice(0, 200)}, false);
      auto allowed = mask.narrow(1, 0, l).view({b, 1, 1, l});
      const std::string what = std::string(c10::toString(dtype)) + " H " + std::to_string(s.h) + " H_kv " +
                               std::to_string(s.h_kv) + " D " + std::to_string(s.d);
      ASSERT_TRUE(decode_attention_applies(q, k, v, allowed)) << what;
      for (std::int64_t last : {std::int64_t{-1}, std::int64_t{250}}) {
        auto last_key = last >= 0 ? torch::full({1}, last, options.dtype(torch::kInt64)) : torch::Tensor();
        auto out = decode_attention(q, k, v, allowed, last_key);
        EXPECT_EQ(out.scalar_type(), dtype);
        EXPECT_LT(max_abs(out, reference_decode_attention(q, k, v, allowed, last)), tol) << what << " last " << last;
      }
      EXPECT_LT(max_abs(decode_attention(q, k, v, {}, {}), reference_decode_attention(q, k, v, {}, -1)), tol)
          << what << " no mask";
    }
  }
}

// The rotary + cache-write kernel against apply_rope and KvCache::store on the same projection, in
// an ordinary three-token step (slots from the host) and a slot step (slot read on the device),
// rope rows per batch row; 16-bit dtypes must agree to the last bit but for rare one-rounding
// differences.
TEST(ModelGpu, RopeAndStoreMatchesApplyRopeAndStore) {
  REQUIRE_CUDA();
  if (!decode_kernels_built()) GTEST_SKIP() << "this build has no model CUDA kernels: rope/store test skipped";
  torch::NoGradGuard no_grad;
  const auto config = smol_shape();
  const std::int64_t b = 4, h = config.n_heads, h_kv = config.n_kv_heads, d = config.head_dim;
  for (auto dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    const auto options = torch::TensorOptions().device(cuda).dtype(dtype);
    KvCache ours(config, b, 20, options), reference(config, b, 20, options);
    for (int step = 0; step < 2; ++step) {
      const std::int64_t t = step == 0 ? 3 : 1;
      if (step == 0) {
        ours.begin(t, {});
        reference.begin(t, {});
      } else {
        auto slot = torch::full({1}, 9, options.dtype(torch::kInt64));
        ours.begin_at(slot);
        reference.begin_at(slot);
      }
      auto qkv = torch::randn({b, t, (h + 2 * h_kv) * d}, options) * 3;
      auto positions = torch::randint(0, 1000, {b, t}, options.dtype(torch::kInt64));
      const auto rope = make_rope(positions, d, config.rope_theta, dtype);
      const std::string what = std::string(c10::toString(dtype)) + (step == 0 ? " step" : " slot step");
      ASSERT_TRUE(rope_store_applies(qkv, rope, ours, h, h_kv, d)) << what;
      auto q = rope_and_store(qkv, rope, ours, 1, h, h_kv, d);
      auto qk = apply_rope(qkv.narrow(2, 0, (h + h_kv) * d).view({b, t, h + h_kv, d}), rope);
      auto v = qkv.narrow(2, (h + h_kv) * d, h_kv * d).view({b, t, h_kv, d});
      auto [k_ref, v_ref] = reference.store(1, qk.narrow(2, h, h_kv), v);
      auto [k_ours, v_ours] = ours.stored(1);
      const double tol = dtype == torch::kFloat32 ? 1e-5 : 0.0;
      auto differing = [](const torch::Tensor& x, const torch::Tensor& y) { return (x != y).sum().item<std::int64_t>(); };
      EXPECT_LE(max_abs(q, qk.narrow(2, 0, h)), tol == 0.0 ? 0.1 : tol) << what;
      EXPECT_LE(max_abs(k_ours, k_ref), tol == 0.0 ? 0.1 : tol) << what;
      EXPECT_EQ(differing(v_ours, v_ref), 0) << what;
      if (dtype != torch::kFloat32) {
        EXPECT_LE(differing(q, qk.narrow(2, 0, h)), q.numel() / 100) << what;
        EXPECT_LE(differing(k_ours, k_ref), k_ref.numel() / 100) << what;
      }
      ours.commit();
      reference.commit();
    }
  }
}

// The sampling kernel: greedy = argmax; at a temperature, draws whose frequencies follow
// softmax(logits / T) (10,240 draws over 12 tokens); log-probs equal libtorch's log_softmax at the
// token; the same generator state gives the same draws.
TEST(ModelGpu, SampleKernelDrawsFromTheTemperedSoftmax) {
  REQUIRE_CUDA();
  if (!decode_kernels_built()) GTEST_SKIP() << "this build has no model CUDA kernels: sampling kernel test skipped";
  torch::NoGradGuard no_grad;
  auto seeded = [](std::uint64_t seed) {
    auto generator = at::globalContext().defaultGenerator(cuda).clone();
    generator.set_current_seed(seed);
    return generator;
  };
  const auto f32 = torch::TensorOptions().device(cuda).dtype(torch::kFloat32);
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    auto logits = (torch::randn({8, 3000}, f32) * 4).to(dtype);
    auto token = torch::empty({8}, f32.dtype(torch::kInt64));
    auto logprob = torch::empty({8}, f32), sampling = torch::empty({8}, f32);
    auto generator = seeded(1);
    ASSERT_TRUE(sample_kernel_applies(logits, 1.0));
    sample_with_kernel(logits, 0.0, generator, token, logprob, sampling);
    const auto logp = logits.to(torch::kFloat32).log_softmax(-1);
    EXPECT_TRUE(torch::equal(token, logits.to(torch::kFloat32).argmax(-1))) << c10::toString(dtype);
    EXPECT_LT(max_abs(logprob, logp.gather(1, token.unsqueeze(1)).squeeze(1)), 1e-4) << c10::toString(dtype);
    EXPECT_EQ(sampling.abs().max().item<float>(), 0.0f);
  }
  const double temperature = 0.7;
  auto row = torch::linspace(-2.0, 1.5, 12, f32);
  auto logits = row.unsqueeze(0).expand({256, 12}).contiguous();
  auto expected = (row / temperature).softmax(0).to(torch::kCPU);
  auto counts = torch::zeros({12}, torch::kFloat64);
  auto generator = seeded(7);
  auto buffer = torch::empty({256, 40}, f32.dtype(torch::kInt64));
  auto logprobs = torch::empty({256, 40}, f32), samplings = torch::empty({256, 40}, f32);
  for (int i = 0; i < 40; ++i) {
    sample_with_kernel(logits, temperature, generator, buffer.select(1, i), logprobs.select(1, i), samplings.select(1, i));
  }
  auto drawn = buffer.flatten().to(torch::kCPU);
  counts.index_add_(0, drawn, torch::ones({drawn.size(0)}, torch::kFloat64));
  EXPECT_LT((counts / drawn.size(0) - expected).abs().max().item<double>(), 0.02) << counts;
  auto flat = buffer.flatten();
  EXPECT_LT(max_abs(logprobs.flatten(), row.log_softmax(0).index_select(0, flat)), 1e-5);
  EXPECT_LT(max_abs(samplings.flatten(), (row / temperature).log_softmax(0).index_select(0, flat)), 1e-5);
  auto again = torch::empty({256}, f32.dtype(torch::kInt64)), first = torch::empty({256}, f32.dtype(torch::kInt64));
  auto g1 = seeded(3), g2 = seeded(3);
  sample_with_kernel(logits, temperature, g1, first, logprobs.select(1, 0), samplings.select(1, 0));
  sample_with_kernel(logits, temperature, g2, again, logprobs.select(1, 1), samplings.select(1, 1));
  EXPECT_TRUE(torch::equal(first, again));
}

// Whole decoding with the kernel against libtorch's attention (the kernel switched off), CUDA
// graph on, left-padded rows, float32: the same greedy tokens and log-probs.
TEST(ModelGpu, DecodingWithTheKernelMatchesLibtorchAttention) {
  REQUIRE_CUDA();
  if (!decode_kernels_built()) GTEST_SKIP() << "this build has no model CUDA kernels: decode attention test skipped";
  auto model = smol_model();
  model->to(cuda);
  const std::vector<std::vector<std::int64_t>> prompts{{1, 2, 3, 4, 5, 6, 7}, {8, 9}, {10, 11, 12, 13}};
  SamplingParams greedy;
  greedy.temperature = 0.0;
  greedy.max_new_tokens = 150;  // past the first 128-key chunk
  auto with_kernel = generate(model, prompts, greedy);
  set_decode_kernels_enabled(false);
  auto with_libtorch = generate(model, prompts, greedy);
  set_decode_kernels_enabled(true);
  ASSERT_TRUE(with_kernel.ok()) << with_kernel.error().message;
  ASSERT_TRUE(with_libtorch.ok()) << with_libtorch.error().message;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    const auto& a = (*with_kernel)[r];
    const auto& e = (*with_libtorch)[r];
    EXPECT_EQ(a.token_ids, e.token_ids) << "row " << r;
    ASSERT_EQ(a.logprobs.size(), e.logprobs.size());
    for (std::size_t i = 0; i < e.logprobs.size(); ++i) {
      EXPECT_NEAR(a.logprobs[i], e.logprobs[i], 1e-4) << "row " << r << " token " << i;
    }
  }
}

}  // namespace
}  // namespace kernelrl::model
