// llama.cpp <-> Hugging Face tensor names, the tensor set of a config, and llama.cpp's Q/K row
// permutation and its inverse.
#include "weights/tensor_names.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace kernelrl::weights {
namespace {

TEST(WeightsTensorNames, MapsBothWays) {
  const std::pair<const char*, const char*> pairs[] = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
      {"blk.0.attn_q.weight", "model.layers.0.self_attn.q_proj.weight"},
      {"blk.12.attn_k.weight", "model.layers.12.self_attn.k_proj.weight"},
      {"blk.3.attn_v.bias", "model.layers.3.self_attn.v_proj.bias"},
      {"blk.29.attn_output.weight", "model.layers.29.self_attn.o_proj.weight"},
      {"blk.1.ffn_gate.weight", "model.layers.1.mlp.gate_proj.weight"},
      {"blk.1.ffn_up.weight", "model.layers.1.mlp.up_proj.weight"},
      {"blk.1.ffn_down.weight", "model.layers.1.mlp.down_proj.weight"},
      {"blk.7.attn_norm.weight", "model.layers.7.input_layernorm.weight"},
      {"blk.7.ffn_norm.weight", "model.layers.7.post_attention_layernorm.weight"},
  };
  for (auto [gguf, hf] : pairs) {
    EXPECT_EQ(*gguf_to_hf_name(gguf), hf);
    EXPECT_EQ(*hf_to_gguf_name(hf), gguf);
  }
  for (const char* bad : {"rope_freqs.weight", "blk.x.attn_q.weight", "blk.1.attn_qkv.weight", "blk..attn_q.weight",
                          "blk.1"}) {
    auto e = gguf_to_hf_name(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_NE(e.error().message.find(bad), std::string::npos);
  }
}

TEST(WeightsTensorNames, ShapesOfAConfig) {
  ModelConfig c;
  c.vocab_size = 49152;
  c.hidden_size = 576;
  c.intermediate_size = 1536;
  c.n_layers = 30;
  c.n_heads = 9;
  c.n_kv_heads = 3;
  c.head_dim = 64;
  c.tie_word_embeddings = true;
  auto shapes = hf_tensor_shapes(c);
  EXPECT_EQ(shapes.size(), 2u + 30u * 9u);
  EXPECT_EQ(shapes.count("lm_head.weight"), 0u);
  EXPECT_EQ(shapes.at("model.layers.4.self_attn.k_proj.weight"), (std::vector<std::int64_t>{192, 576}));
  EXPECT_EQ(shapes.at("model.layers.4.mlp.down_proj.weight"), (std::vector<std::int64_t>{576, 1536}));
  c.tie_word_embeddings = false;
  c.architecture = "qwen2";
  c.attention_bias = true;
  shapes = hf_tensor_shapes(c);
  EXPECT_EQ(shapes.size(), 3u + 30u * 12u);
  EXPECT_EQ(shapes.at("model.layers.0.self_attn.v_proj.bias"), (std::vector<std::int64_t>{192}));
}

TEST(WeightsTensorNames, PermutationMatchesLlamaCpp) {
  // 2 heads of width 4, 1 column: HF rows per head are [x0, x1 | y0, y1] (rotate-half pairs
  // (x_j, y_j)); llama.cpp interleaves them to [x0, y0, x1, y1].
  std::vector<float> hf = {0, 1, 2, 3, 10, 11, 12, 13};
  std::vector<float> rows = hf;
  permute_rows(rows, 8, 1, 2);
  EXPECT_EQ(rows, (std::vector<float>{0, 2, 1, 3, 10, 12, 11, 13}));
  unpermute_rows(rows, 8, 1, 2);
  EXPECT_EQ(rows, hf);
  // Several columns, 3 heads of width 8: unpermute inverts permute and moves whole rows.
  std::vector<float> m(24 * 5);
  std::iota(m.begin(), m.end(), 0.0f);
  std::vector<float> p = m;
  permute_rows(p, 24, 5, 3);
  EXPECT_NE(p, m);
  for (int r = 0; r < 24; ++r) EXPECT_EQ(static_cast<int>(p[r * 5]) % 5, 0);
  // gguf row h*D + 2j + t holds hf row h*D + t*D/2 + j: row 1 (h0, j0, t1) = hf row 4.
  EXPECT_EQ(p[1 * 5], m[4 * 5]);
  EXPECT_EQ(p[10 * 5 + 3], m[(8 + 1) * 5 + 3]);  // h1, j1, t0 -> hf row 8 + 1
  unpermute_rows(p, 24, 5, 3);
  EXPECT_EQ(p, m);
}

}  // namespace
}  // namespace kernelrl::weights
