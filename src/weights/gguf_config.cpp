// config_from_gguf: llama.cpp's hyper-parameter keys (llama-arch.cpp LLM_KV_*) to ModelConfig.
#include "weights/gguf_config.hpp"

namespace kernelrl::weights {

namespace {

// Reads `<arch>.<suffix>` as an integer into `out`; when absent, keeps `out` if `optional`.
common::Fallible read_int(const GgufFile& f, const std::string& key, std::int64_t& out, bool optional) {
  if (optional && !f.has(key)) return common::Ok{};
  auto v = f.get_int(key);
  if (!v) return v.error();
  out = *v;
  return common::Ok{};
}

common::Fallible read_float(const GgufFile& f, const std::string& key, double& out, bool optional) {
  if (optional && !f.has(key)) return common::Ok{};
  auto v = f.get_float(key);
  if (!v) return v.error();
  out = *v;
  return common::Ok{};
}

common::Fallible read_sizes(const GgufFile& f, const std::string& a, ModelConfig& c) {
  struct Key {
    const char* suffix;
    std::int64_t* out;
  };
  const Key required[] = {{".block_count", &c.n_layers},
                          {".embedding_length", &c.hidden_size},
                          {".feed_forward_length", &c.intermediate_size},
                          {".attention.head_count", &c.n_heads},
                          {".context_length", &c.max_position}};
  for (const auto& k : required) {
    if (auto ok = read_int(f, a + k.suffix, *k.out, false); !ok) return ok;
  }
  c.n_kv_heads = c.n_heads;
  if (auto ok = read_int(f, a + ".attention.head_count_kv", c.n_kv_heads, true); !ok) return ok;
  c.head_dim = c.n_heads > 0 ? c.hidden_size / c.n_heads : 0;
  std::string head_key = f.has(a + ".attention.key_length") ? a + ".attention.key_length" : a + ".rope.dimension_count";
  if (auto ok = read_int(f, head_key, c.head_dim, true); !ok) return ok;
  if (auto ok = read_float(f, a + ".rope.freq_base", c.rope_theta, true); !ok) return ok;
  if (auto ok = read_float(f, a + ".attention.layer_norm_rms_epsilon", c.rms_norm_eps, false); !ok) return ok;
  return common::Ok{};
}

common::Fallible read_vocab(const GgufFile& f, const std::string& a, ModelConfig& c) {
  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (embd == nullptr) return common::make_error(f.path().string() + ": tensor 'token_embd.weight' is missing");
  if (embd->shape.size() != 2) return common::make_error(f.path().string() + ": tensor 'token_embd.weight' is not 2-D");
  c.vocab_size = embd->shape[0];
  if (f.has(a + ".vocab_size")) {
    auto v = f.get_int(a + ".vocab_size");
    if (!v) return v.error();
    if (*v != c.vocab_size) {
      return common::make_error(f.path().string() + ": metadata '" + a + ".vocab_size' is " + std::to_string(*v) +
                                " but token_embd.weight has " + std::to_string(c.vocab_size) + " rows");
    }
  }
  c.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
  if (auto ok = read_int(f, "tokenizer.ggml.bos_token_id", c.bos_token_id, true); !ok) return ok;
  if (auto ok = read_int(f, "tokenizer.ggml.eos_token_id", c.eos_token_id, true); !ok) return ok;
  return common::Ok{};
}

}  // namespace

common::Expected<ModelConfig> config_from_gguf(const GgufFile& f) {
  auto arch = f.get_string("general.architecture");
  if (!arch) return arch.error();
  if (*arch != "llama" && *arch != "qwen2") {
    return common::make_error(f.path().string() + ": general.architecture is \"" + *arch +
                              "\"; supported: llama, qwen2");
  }
  ModelConfig c;
  c.architecture = *arch;
  c.attention_bias = *arch == "qwen2";
  if (auto ok = read_sizes(f, *arch, c); !ok) return ok.error();
  if (auto ok = read_vocab(f, *arch, c); !ok) return ok.error();
  if (auto ok = c.validate(); !ok) return common::make_error(f.path().string() + ": " + ok.error().message);
  return c;
}

}  // namespace kernelrl::weights
