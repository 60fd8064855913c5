// The decoding kernels' dispatch on machines without them in play: every *_applies() refuses CPU
// tensors (the libtorch operators run), whatever the switch says, and the switch round-trips. The
// kernels' numerics are checked on the GPU (model_gpu_test).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/decode_kernels.hpp"
#include "model/kv_cache.hpp"
#include "model/layers.hpp"
#include "model_test_util.hpp"

namespace kernelrl::model {
namespace {

TEST(DecodeKernels, CpuTensorsNeverTakeTheKernels) {
  torch::NoGradGuard no_grad;
  auto config = testing::tiny_config(true);
  const std::int64_t b = 2, h = config.n_heads, h_kv = config.n_kv_heads, d = config.head_dim;
  for (bool enabled : {true, false}) {
    set_decode_kernels_enabled(enabled);
    EXPECT_EQ(decode_kernels_enabled(), enabled);
    auto q = torch::randn({b, 1, h, d});
    auto k = torch::randn({b, h_kv, 8, d});
    EXPECT_FALSE(decode_attention_applies(q, k, k, {}));
    EXPECT_FALSE(swiglu_applies(torch::randn({b, 1, 16})));
    EXPECT_FALSE(sample_kernel_applies(torch::randn({b, 50}), 1.0));
    KvCache cache(config, b, 8, torch::TensorOptions());
    cache.begin(1, {});
    auto rope = make_rope(torch::zeros({b, 1}, torch::kInt64), d, config.rope_theta, torch::kFloat32);
    EXPECT_FALSE(rope_store_applies(torch::randn({b, 1, (h + 2 * h_kv) * d}), rope, cache, h, h_kv, d));
    cache.rollback();
  }
  set_decode_kernels_enabled(true);
}

TEST(DecodeKernels, TopPBelowOneKeepsTheLibtorchSampler) {
  // Independent of the device: nucleus filtering needs a sort, which the kernel does not do.
  EXPECT_FALSE(sample_kernel_applies(torch::randn({2, 50}), 0.9));
}

}  // namespace
}  // namespace kernelrl::model
