// The shape of a decoder-only transformer of the Llama / Qwen2 family (RMSNorm, rotary embeddings,
// SwiGLU, grouped-query attention), as a checkpoint describes it: Hugging Face's config.json or a
// GGUF file's `<arch>.*` metadata. Everything the model, the loader and the saver need, nothing else.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::weights {

struct ModelConfig {
  std::string architecture = "llama";  // "llama" or "qwen2" (Qwen2 adds biases to q, k, v)
  std::int64_t vocab_size = 0;         // rows of the embedding and of the output projection
  std::int64_t hidden_size = 0;        // d_model
  std::int64_t intermediate_size = 0;  // SwiGLU inner width
  std::int64_t n_layers = 0;           // decoder blocks
  std::int64_t n_heads = 0;            // query heads
  std::int64_t n_kv_heads = 0;         // key/value heads (grouped-query attention: n_heads % n_kv_heads == 0)
  std::int64_t head_dim = 0;           // per-head width; hidden_size / n_heads unless the checkpoint says otherwise
  double rope_theta = 10000.0;         // rotary base frequency
  double rms_norm_eps = 1e-6;          // RMSNorm epsilon
  std::int64_t max_position = 2048;    // context length the checkpoint was trained for
  bool tie_word_embeddings = false;    // output projection shares the embedding matrix
  bool attention_bias = false;         // q/k/v projections carry biases (Qwen2)
  std::int64_t bos_token_id = -1;      // -1: none
  std::int64_t eos_token_id = -1;      // -1: none

  // A config that the model can be built from: every size positive and consistent, or an error
  // naming the field at fault.
  common::Fallible validate() const;
};

// Reads Hugging Face's config.json (model_type llama/qwen2/mistral-style keys); errors name the file and field.
common::Expected<ModelConfig> read_hf_config(const std::filesystem::path& config_json);

// The config.json that Hugging Face transformers loads as the same model (LlamaForCausalLM or
// Qwen2ForCausalLM, torch_dtype as given: "float32" or "bfloat16").
nlohmann::json to_hf_config(const ModelConfig& config, const std::string& torch_dtype);

}  // namespace kernelrl::weights
