// Shape checks of a ModelConfig, with messages that name the field and its value.
#include "model/config_check.hpp"

#include <string>

namespace kernelrl::model {
namespace {

common::Fallible positive(const char* field, std::int64_t value) {
  if (value > 0) return common::Ok{};
  return common::Error{std::string("model config: ") + field + " must be positive, got " + std::to_string(value)};
}

}  // namespace

common::Fallible check_config(const weights::ModelConfig& config) {
  if (config.architecture != "llama" && config.architecture != "qwen2") {
    return common::Error{"model config: architecture must be \"llama\" or \"qwen2\", got \"" + config.architecture + "\""};
  }
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"vocab_size", config.vocab_size}, {"hidden_size", config.hidden_size},
      {"intermediate_size", config.intermediate_size}, {"n_layers", config.n_layers},
      {"n_heads", config.n_heads}, {"n_kv_heads", config.n_kv_heads}, {"head_dim", config.head_dim},
      {"max_position", config.max_position}};
  for (const auto& [field, value] : sizes) {
    if (auto ok = positive(field, value); !ok) return ok;
  }
  if (config.n_heads % config.n_kv_heads != 0) {
    return common::Error{"model config: n_heads (" + std::to_string(config.n_heads) +
                         ") must be a multiple of n_kv_heads (" + std::to_string(config.n_kv_heads) + ")"};
  }
  if (config.head_dim % 2 != 0) {
    return common::Error{"model config: head_dim must be even for rotary embeddings, got " +
                         std::to_string(config.head_dim)};
  }
  if (!(config.rope_theta > 0.0)) {
    return common::Error{"model config: rope_theta must be positive, got " + std::to_string(config.rope_theta)};
  }
  if (!(config.rms_norm_eps > 0.0)) {
    return common::Error{"model config: rms_norm_eps must be positive, got " + std::to_string(config.rms_norm_eps)};
  }
  return common::Ok{};
}

}  // namespace kernelrl::model
