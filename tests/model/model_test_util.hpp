// A tiny Llama/Qwen2 model for the model tests: random weights large enough that logits differ
// clearly between tokens, float64 where a test compares against finite differences.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

#include "model/transformer.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::model::testing {

inline weights::ModelConfig tiny_config(bool tied = false, bool qwen2 = false) {
  weights::ModelConfig c;
  c.architecture = qwen2 ? "qwen2" : "llama";
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.rope_theta = 10000.0;
  c.rms_norm_eps = 1e-6;
  c.max_position = 256;
  c.tie_word_embeddings = tied;
  c.attention_bias = qwen2;
  return c;
}

// Weights drawn from `seed`: matrices N(0, matrix_std), norms 1 + N(0, 0.1), biases N(0, 0.1).
inline Transformer tiny_model(const weights::ModelConfig& config, torch::Dtype dtype = torch::kFloat64,
                              std::uint64_t seed = 1, double matrix_std = 0.3) {
  torch::manual_seed(seed);
  Transformer model(config);
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters()) {
    const auto& name = item.key();
    auto& p = item.value();
    if (name.find("norm") != std::string::npos) {
      p.normal_(1.0, 0.1);
    } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) {
      p.normal_(0.0, 0.1);
    } else {
      p.normal_(0.0, matrix_std);
    }
  }
  model->to(dtype);
  return model;
}

// Every parameter's gradient (a copy), by Hugging Face name.
inline std::map<std::string, torch::Tensor> parameter_grads(Transformer& model) {
  std::map<std::string, torch::Tensor> g;
  for (const auto& item : model->named_parameters()) g[item.key()] = item.value().grad().clone();
  return g;
}

// Random token ids [b, t] in [0, vocab).
inline torch::Tensor random_ids(std::int64_t b, std::int64_t t, std::int64_t vocab, std::uint64_t seed = 7) {
  torch::manual_seed(seed);
  return torch::randint(0, vocab, {b, t}, torch::kInt64);
}

}  // namespace kernelrl::model::testing
