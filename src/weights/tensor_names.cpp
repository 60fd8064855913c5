// Name tables (llama.cpp's gguf-py tensor_mapping.py for the LLM_ARCH_LLAMA / QWEN2 tensors) and the
// Q/K row permutation.
#include "weights/tensor_names.hpp"

#include <algorithm>
#include <cstring>

namespace kernelrl::weights {

namespace {

struct NamePair {
  const char* gguf;  // suffix after "blk.N." (per layer) or the whole name (global)
  const char* hf;    // suffix after "model.layers.N." or the whole name
};

constexpr NamePair global_names[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};

constexpr NamePair layer_names[] = {
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
    {"attn_norm.weight", "input_layernorm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
};

// Splits "<prefix><digits>.<rest>" into the layer number and rest; false when it does not match.
bool split_layer(const std::string& name, const std::string& prefix, std::string& layer, std::string& rest) {
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size() || dot - prefix.size() > 6) return false;
  layer = name.substr(prefix.size(), dot - prefix.size());
  if (!std::all_of(layer.begin(), layer.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  rest = name.substr(dot + 1);
  return true;
}

common::Expected<std::string> map_name(const std::string& name, bool from_gguf) {
  for (const auto& p : global_names) {
    if (name == (from_gguf ? p.gguf : p.hf)) return std::string(from_gguf ? p.hf : p.gguf);
  }
  std::string layer, rest;
  if (split_layer(name, from_gguf ? "blk." : "model.layers.", layer, rest)) {
    for (const auto& p : layer_names) {
      if (rest == (from_gguf ? p.gguf : p.hf)) {
        return (from_gguf ? "model.layers." : "blk.") + layer + "." + (from_gguf ? p.hf : p.gguf);
      }
    }
  }
  return common::make_error("tensor '" + name + "' is not a Llama/Qwen2 tensor this loader knows");
}

}  // namespace

std::map<std::string, std::vector<std::int64_t>> hf_tensor_shapes(const ModelConfig& c) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::int64_t q_rows = c.n_heads * c.head_dim;
  std::int64_t kv_rows = c.n_kv_heads * c.head_dim;
  shapes["model.embed_tokens.weight"] = {c.vocab_size, c.hidden_size};
  shapes["model.norm.weight"] = {c.hidden_size};
  if (!c.tie_word_embeddings) shapes["lm_head.weight"] = {c.vocab_size, c.hidden_size};
  for (std::int64_t i = 0; i < c.n_layers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    shapes[p + "self_attn.q_proj.weight"] = {q_rows, c.hidden_size};
    shapes[p + "self_attn.k_proj.weight"] = {kv_rows, c.hidden_size};
    shapes[p + "self_attn.v_proj.weight"] = {kv_rows, c.hidden_size};
    shapes[p + "self_attn.o_proj.weight"] = {c.hidden_size, q_rows};
    if (c.attention_bias) {
      shapes[p + "self_attn.q_proj.bias"] = {q_rows};
      shapes[p + "self_attn.k_proj.bias"] = {kv_rows};
      shapes[p + "self_attn.v_proj.bias"] = {kv_rows};
    }
    shapes[p + "mlp.gate_proj.weight"] = {c.intermediate_size, c.hidden_size};
    shapes[p + "mlp.up_proj.weight"] = {c.intermediate_size, c.hidden_size};
    shapes[p + "mlp.down_proj.weight"] = {c.hidden_size, c.intermediate_size};
    shapes[p + "input_layernorm.weight"] = {c.hidden_size};
    shapes[p + "post_attention_layernorm.weight"] = {c.hidden_size};
  }
  return shapes;
}

common::Expected<std::string> gguf_to_hf_name(const std::string& gguf_name) { return map_name(gguf_name, true); }

common::Expected<std::string> hf_to_gguf_name(const std::string& hf_name) { return map_name(hf_name, false); }

void unpermute_rows(std::span<float> data, std::int64_t rows, std::int64_t cols, std::int64_t n_head) {
  std::int64_t d = rows / n_head, half = d / 2;
  std::vector<float> src(data.begin(), data.end());
  for (std::int64_t h = 0; h < n_head; ++h) {
    for (std::int64_t j = 0; j < half; ++j) {
      for (std::int64_t t = 0; t < 2; ++t) {
        const float* from = src.data() + (h * d + 2 * j + t) * cols;
        std::copy(from, from + cols, data.data() + (h * d + t * half + j) * cols);
      }
    }
  }
}

void permute_rows(std::span<float> data, std::int64_t rows, std::int64_t cols, std::int64_t n_head) {
  std::int64_t d = rows / n_head, half = d / 2;
  std::vector<float> src(data.begin(), data.end());
  for (std::int64_t h = 0; h < n_head; ++h) {
    for (std::int64_t j = 0; j < half; ++j) {
      for (std::int64_t t = 0; t < 2; ++t) {
        const float* from = src.data() + (h * d + t * half + j) * cols;
        std::copy(from, from + cols, data.data() + (h * d + 2 * j + t) * cols);
      }
    }
  }
}

}  // namespace kernelrl::weights
