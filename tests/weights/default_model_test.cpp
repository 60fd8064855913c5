// The real default model (SmolLM2-135M-Instruct, Q4_1 GGUF, fetched by scripts/fetch-default-model.sh):
// config, tokenizer metadata, dequantised rows against gguf-py's values (smollm2_rows.safetensors,
// made by scripts/make_weights_fixtures.py), and a full float32 load. Fails, never skips, when the
// file is missing.
#include <gtest/gtest.h>

#include <ATen/ops/isfinite.h>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "weights/checkpoint.hpp"
#include "weights/dequantize.hpp"
#include "weights/gguf.hpp"
#include "weights/gguf_config.hpp"
#include "weights/gguf_tokenizer.hpp"
#include "weights/safetensors.hpp"

namespace kernelrl::weights {
namespace {

const std::filesystem::path default_model =
    std::filesystem::path(KERNELRL_SOURCE_DIR) / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";

#define REQUIRE_DEFAULT_MODEL()                                                                          \
  ASSERT_TRUE(std::filesystem::exists(default_model))                                                    \
      << default_model.string() << " is missing: run scripts/fetch-default-model.sh (or scripts/setup.sh)"

std::vector<float> floats(const TensorView& v) {
  std::vector<float> out(v.data.size() / 4);
  std::memcpy(out.data(), v.data.data(), v.data.size());
  return out;
}

TEST(WeightsDefaultModel, Config) {
  REQUIRE_DEFAULT_MODEL();
  auto f = GgufFile::open(default_model);
  ASSERT_TRUE(f) << f.error().message;
  auto c = config_from_gguf(*f);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->architecture, "llama");
  EXPECT_EQ(c->n_layers, 30);
  EXPECT_EQ(c->hidden_size, 576);
  EXPECT_EQ(c->intermediate_size, 1536);
  EXPECT_EQ(c->n_heads, 9);
  EXPECT_EQ(c->n_kv_heads, 3);
  EXPECT_EQ(c->head_dim, 64);
  EXPECT_EQ(c->vocab_size, 49152);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_FALSE(c->attention_bias);
  EXPECT_EQ(c->rope_theta, 100000.0);
  EXPECT_EQ(c->rms_norm_eps, 1e-5);
  EXPECT_EQ(c->max_position, 8192);
  EXPECT_EQ(c->bos_token_id, 1);
  EXPECT_EQ(c->eos_token_id, 2);
  EXPECT_EQ(f->tensors().size(), 272u);
}

TEST(WeightsDefaultModel, Tokenizer) {
  REQUIRE_DEFAULT_MODEL();
  auto f = GgufFile::open(default_model);
  ASSERT_TRUE(f) << f.error().message;
  auto t = read_gguf_tokenizer(*f);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->model, "gpt2");
  EXPECT_EQ(t->pre, "smollm");
  EXPECT_EQ(t->tokens.size(), 49152u);
  EXPECT_EQ(t->merges.size(), 48900u);
  EXPECT_EQ(t->token_types.size(), 49152u);
  EXPECT_EQ(t->tokens[1], "<|im_start|>");
  EXPECT_EQ(t->tokens[2], "<|im_end|>");
  EXPECT_EQ(t->bos_id, 1);
  EXPECT_EQ(t->eos_id, 2);
  EXPECT_EQ(t->pad_id, 2);
  EXPECT_FALSE(t->add_bos);
  EXPECT_NE(t->chat_template.find("<|im_start|>"), std::string::npos);
}

TEST(WeightsDefaultModel, RowsEqualTheReferenceDequantisation) {
  REQUIRE_DEFAULT_MODEL();
  auto f = GgufFile::open(default_model);
  ASSERT_TRUE(f) << f.error().message;
  auto golden = SafetensorsFile::open(testing::fixture("smollm2_rows.safetensors"));
  ASSERT_TRUE(golden) << golden.error().message;
  auto rows_of = nlohmann::json::parse(golden->metadata().at("rows"));
  auto ck = load_checkpoint(default_model);
  ASSERT_TRUE(ck) << ck.error().message;
  int n_checked = 0;
  for (const auto& want : golden->tensors()) {
    std::vector<float> expected = floats(want);
    std::vector<float> full;
    std::int64_t cols = want.shape.back();
    if (const GgufTensorInfo* info = f->find_tensor(want.name)) {  // GGUF-side: as stored
      auto d = dequantize_tensor(*f, *info);
      ASSERT_TRUE(d) << d.error().message;
      full = std::move(*d);
    } else {  // HF-side: load_checkpoint's un-permuted tensor
      const at::Tensor& t = ck->tensors.at(want.name);
      full.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    }
    std::vector<std::int64_t> rows;
    if (rows_of.contains(want.name)) {
      rows = rows_of[want.name].get<std::vector<std::int64_t>>();
    } else {
      rows = {0};  // a whole 1-D tensor
    }
    ASSERT_EQ(static_cast<std::int64_t>(rows.size() * cols), static_cast<std::int64_t>(expected.size())) << want.name;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(std::memcmp(full.data() + rows[i] * cols, expected.data() + i * cols, cols * 4), 0)
          << want.name << " row " << rows[i] << " differs from gguf.quants.dequantize";
      ++n_checked;
    }
  }
  EXPECT_GE(n_checked, 20);
}

TEST(WeightsDefaultModel, LoadsAsFloat32) {
  REQUIRE_DEFAULT_MODEL();
  auto start = std::chrono::steady_clock::now();
  auto ck = load_checkpoint(default_model, at::kFloat);
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(ck) << ck.error().message;
  std::printf("load_checkpoint(%s, float32): %.0f ms\n", default_model.filename().c_str(), load_ms);
  EXPECT_EQ(ck->tensors.size(), 272u);  // 30 x 9 + embed_tokens + norm; lm_head tied
  EXPECT_EQ(ck->tensors.count("lm_head.weight"), 0u);
  std::int64_t n_params = 0;
  for (const auto& [name, t] : ck->tensors) {
    EXPECT_EQ(t.scalar_type(), at::kFloat) << name;
    EXPECT_TRUE(at::isfinite(t).all().item<bool>()) << name << " has non-finite values";
    n_params += t.numel();
  }
  EXPECT_EQ(n_params, 134515008);
  EXPECT_EQ(ck->tensors.at("model.embed_tokens.weight").sizes().vec(), (std::vector<std::int64_t>{49152, 576}));
  EXPECT_EQ(ck->tensors.at("model.layers.29.self_attn.k_proj.weight").sizes().vec(), (std::vector<std::int64_t>{192, 576}));
}

}  // namespace
}  // namespace kernelrl::weights
