// The key/value cache's bookkeeping: slots, masks, per-row lengths, overflow, reset.
#include "model/kv_cache.hpp"

#include <gtest/gtest.h>

#include "model_test_util.hpp"

namespace kernelrl::model {
namespace {

TEST(KvCache, RecordsSlotsMasksAndLengths) {
  const auto config = testing::tiny_config();
  KvCache cache(config, 2, 6, torch::TensorOptions().dtype(torch::kFloat32));
  EXPECT_EQ(cache.length(), 0);
  EXPECT_FALSE(cache.has_padding());

  cache.begin(3, torch::tensor({0, 1, 1, 1, 1, 1}, torch::kInt64).view({2, 3}));
  auto k = torch::ones({2, 3, config.n_kv_heads, config.head_dim});
  auto [keys, values] = cache.store(1, k, k * 2);
  EXPECT_EQ(keys.sizes(), (std::vector<std::int64_t>{2, config.n_kv_heads, 3, config.head_dim}));
  EXPECT_EQ(values[0][0][2][0].item<float>(), 2.0f);
  cache.commit();
  EXPECT_EQ(cache.length(), 3);
  EXPECT_TRUE(cache.has_padding());
  EXPECT_TRUE(torch::equal(cache.lengths(), torch::tensor({2, 3}, torch::kInt64)));

  cache.begin(1, {});  // one real token per row
  EXPECT_EQ(cache.key_mask().size(1), 4);
  cache.store(0, torch::zeros({2, 1, config.n_kv_heads, config.head_dim}),
              torch::zeros({2, 1, config.n_kv_heads, config.head_dim}));
  cache.commit();
  EXPECT_TRUE(torch::equal(cache.lengths(), torch::tensor({3, 4}, torch::kInt64)));

  EXPECT_THROW(cache.begin(3, {}), c10::Error);  // 4 + 3 > 6
  cache.reset();
  EXPECT_EQ(cache.length(), 0);
  EXPECT_FALSE(cache.has_padding());
  cache.begin(6, {});
  cache.commit();
  EXPECT_TRUE(torch::equal(cache.lengths(), torch::tensor({6, 6}, torch::kInt64)));
}

}  // namespace
}  // namespace kernelrl::model
