// ModelConfig: validation, Hugging Face config.json in (read_hf_config) and out (to_hf_config).
#include "weights/model_config.hpp"

#include <cmath>

#include "common/fs.hpp"

namespace kernelrl::weights {

namespace {

using nlohmann::json;

common::Fallible positive(const char* field, const char* hf_key, std::int64_t value) {
  if (value > 0) return common::Ok{};
  return common::make_error(std::string(field) + " (" + hf_key + ") is " + std::to_string(value) +
                            ", must be positive");
}

// Field readers over a parsed config.json; each error names the file and the key.
class Fields {
 public:
  Fields(const json& j, std::string file) : j_(j), file_(std::move(file)) {}

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  common::Expected<std::int64_t> integer(const char* key) const {
    if (!has(key)) return common::make_error(file_ + ": field '" + key + "' is missing");
    return integer_value(key, j_.at(key));
  }
  common::Expected<std::int64_t> integer_or(const char* key, std::int64_t fallback) const {
    return has(key) ? integer_value(key, j_.at(key)) : fallback;
  }
  common::Expected<double> number_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_number()) return wrong(key, "a number");
    return j_.at(key).get<double>();
  }
  common::Expected<bool> boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) return wrong(key, "true or false");
    return j_.at(key).get<bool>();
  }
  common::Expected<std::string> string(const char* key) const {
    if (!has(key)) return common::make_error(file_ + ": field '" + key + "' is missing");
    if (!j_.at(key).is_string()) return wrong(key, "a string");
    return j_.at(key).get<std::string>();
  }
  // A token id: an integer, or a list of them (the first is taken), or absent / null / [] (-1).
  common::Expected<std::int64_t> token_id(const char* key) const {
    if (!has(key)) return std::int64_t{-1};
    const json& v = j_.at(key);
    if (v.is_array()) return v.empty() ? std::int64_t{-1} : integer_value(key, v.at(0));
    return integer_value(key, v);
  }
  common::Error wrong(const char* key, const char* wanted) const {
    return common::make_error(file_ + ": field '" + key + "' is " + j_.at(key).dump() + ", not " + wanted);
  }

 private:
  common::Expected<std::int64_t> integer_value(const char* key, const json& v) const {
    if (!v.is_number_integer()) {
      return common::make_error(file_ + ": field '" + key + "' is " + v.dump() + ", not an integer");
    }
    return v.get<std::int64_t>();
  }

  const json& j_;
  std::string file_;
};

// Settings this model cannot represent; loading them silently would give a different model.
common::Fallible reject_unsupported(const Fields& f, const json& j, const std::string& file) {
  if (f.has("rope_scaling")) {
    const json& rs = j.at("rope_scaling");
    std::string type;
    if (rs.is_object() && rs.contains("rope_type") && rs.at("rope_type").is_string()) type = rs.at("rope_type").get<std::string>();
    if (rs.is_object() && rs.contains("type") && rs.at("type").is_string()) type = rs.at("type").get<std::string>();
    if (type != "default") {
      return common::make_error(file + ": field 'rope_scaling' is " + rs.dump() + "; rope scaling is not supported");
    }
  }
  if (f.has("hidden_act") && !(j.at("hidden_act").is_string() && j.at("hidden_act").get<std::string>() == "silu")) {
    return common::make_error(file + ": field 'hidden_act' is " + j.at("hidden_act").dump() + "; only \"silu\" is supported");
  }
  auto sliding = f.boolean_or("use_sliding_window", false);
  if (!sliding) return sliding.error();
  if (*sliding) return common::make_error(file + ": field 'use_sliding_window' is true; sliding-window attention is not supported");
  return common::Ok{};
}

common::Fallible read_sizes(const Fields& f, ModelConfig& c) {
  auto take = [&](const char* key, std::int64_t& out) -> common::Fallible {
    auto v = f.integer(key);
    if (!v) return v.error();
    out = *v;
    return common::Ok{};
  };
  const std::pair<const char*, std::int64_t*> required[] = {{"vocab_size", &c.vocab_size},
                                                            {"hidden_size", &c.hidden_size},
                                                            {"intermediate_size", &c.intermediate_size},
                                                            {"num_hidden_layers", &c.n_layers},
                                                            {"num_attention_heads", &c.n_heads}};
  for (auto [key, out] : required) {
    if (auto ok = take(key, *out); !ok) return ok;
  }
  auto kv = f.integer_or("num_key_value_heads", c.n_heads);
  if (!kv) return kv.error();
  c.n_kv_heads = *kv;
  auto head_dim = f.integer_or("head_dim", c.n_heads > 0 ? c.hidden_size / c.n_heads : 0);
  if (!head_dim) return head_dim.error();
  c.head_dim = *head_dim;
  auto max_position = f.integer_or("max_position_embeddings", c.max_position);
  if (!max_position) return max_position.error();
  c.max_position = *max_position;
  return common::Ok{};
}

common::Fallible read_rest(const Fields& f, ModelConfig& c) {
  auto rope_theta = f.number_or("rope_theta", c.rope_theta);
  auto eps = f.number_or("rms_norm_eps", c.rms_norm_eps);
  auto tie = f.boolean_or("tie_word_embeddings", false);
  auto bias = f.boolean_or("attention_bias", false);
  auto bos = f.token_id("bos_token_id");
  auto eos = f.token_id("eos_token_id");
  if (!rope_theta) return rope_theta.error();
  if (!eps) return eps.error();
  if (!tie) return tie.error();
  if (!bias) return bias.error();
  if (!bos) return bos.error();
  if (!eos) return eos.error();
  c.rope_theta = *rope_theta;
  c.rms_norm_eps = *eps;
  c.tie_word_embeddings = *tie;
  c.attention_bias = c.architecture == "qwen2" ? true : *bias;  // Qwen2 always biases q, k, v
  c.bos_token_id = *bos;
  c.eos_token_id = *eos;
  return common::Ok{};
}

}  // namespace

common::Fallible ModelConfig::validate() const {
  if (architecture != "llama" && architecture != "qwen2") {
    return common::make_error("architecture is \"" + architecture + "\"; supported: llama, qwen2");
  }
  struct Size {
    const char* field;
    const char* hf_key;
    std::int64_t value;
  };
  const Size sizes[] = {{"vocab_size", "vocab_size", vocab_size},
                        {"hidden_size", "hidden_size", hidden_size},
                        {"intermediate_size", "intermediate_size", intermediate_size},
                        {"n_layers", "num_hidden_layers", n_layers},
                        {"n_heads", "num_attention_heads", n_heads},
                        {"n_kv_heads", "num_key_value_heads", n_kv_heads},
                        {"head_dim", "head_dim", head_dim},
                        {"max_position", "max_position_embeddings", max_position}};
  for (const auto& s : sizes) {
    if (auto ok = positive(s.field, s.hf_key, s.value); !ok) return ok;
  }
  if (n_heads % n_kv_heads != 0) {
    return common::make_error("n_heads (num_attention_heads) " + std::to_string(n_heads) +
                              " is not a multiple of n_kv_heads (num_key_value_heads) " + std::to_string(n_kv_heads));
  }
  if (head_dim % 2 != 0) return common::make_error("head_dim " + std::to_string(head_dim) + " is odd; rotary embeddings pair dimensions");
  // transformers' Llama/Qwen2 (4.40) derive the head width as hidden_size / num_attention_heads.
  if (head_dim * n_heads != hidden_size) {
    return common::make_error("head_dim " + std::to_string(head_dim) + " x n_heads " + std::to_string(n_heads) +
                              " is not hidden_size " + std::to_string(hidden_size));
  }
  if (!(rope_theta > 0) || !std::isfinite(rope_theta)) return common::make_error("rope_theta " + std::to_string(rope_theta) + " must be positive");
  if (!(rms_norm_eps > 0) || !std::isfinite(rms_norm_eps)) return common::make_error("rms_norm_eps " + std::to_string(rms_norm_eps) + " must be positive");
  if (architecture == "qwen2" && !attention_bias) return common::make_error("attention_bias is false but Qwen2 always has q/k/v biases");
  if (architecture == "llama" && attention_bias) {
    return common::make_error("attention_bias is true for llama, which would also bias o_proj; not supported");
  }
  const std::pair<const char*, std::int64_t> ids[] = {{"bos_token_id", bos_token_id}, {"eos_token_id", eos_token_id}};
  for (auto [field, id] : ids) {
    if (id < -1 || id >= vocab_size) {
      return common::make_error(std::string(field) + " " + std::to_string(id) + " is outside the vocabulary (" +
                                std::to_string(vocab_size) + ")");
    }
  }
  return common::Ok{};
}

common::Expected<ModelConfig> read_hf_config(const std::filesystem::path& config_json) {
  auto text = common::read_file(config_json);
  if (!text) return text.error();
  const std::string file = config_json.string();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return common::make_error(file + ": not a JSON object");
  Fields f(j, file);
  ModelConfig c;
  auto model_type = f.string("model_type");
  if (!model_type) return model_type.error();
  if (*model_type == "llama" || *model_type == "mistral") {
    c.architecture = "llama";  // Mistral is Llama's architecture (its sliding window is checked below)
  } else if (*model_type == "qwen2") {
    c.architecture = "qwen2";
    c.max_position = 32768;  // Qwen2Config's default
  } else {
    return common::make_error(file + ": field 'model_type' is \"" + *model_type + "\"; supported: llama, mistral, qwen2");
  }
  if (auto ok = reject_unsupported(f, j, file); !ok) return ok.error();
  if (*model_type == "mistral" && f.has("sliding_window")) {
    return common::make_error(file + ": field 'sliding_window' is set; sliding-window attention is not supported");
  }
  if (auto ok = read_sizes(f, c); !ok) return ok.error();
  if (auto ok = read_rest(f, c); !ok) return ok.error();
  if (auto ok = c.validate(); !ok) return common::make_error(file + ": " + ok.error().message);
  return c;
}

nlohmann::json to_hf_config(const ModelConfig& c, const std::string& torch_dtype) {
  bool qwen2 = c.architecture == "qwen2";
  json j = {
      {"architectures", json::array({qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM"})},
      {"model_type", c.architecture},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"intermediate_size", c.intermediate_size},
      {"num_hidden_layers", c.n_layers},
      {"num_attention_heads", c.n_heads},
      {"num_key_value_heads", c.n_kv_heads},
      {"head_dim", c.head_dim},
      {"hidden_act", "silu"},
      {"max_position_embeddings", c.max_position},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", nullptr},
      {"rms_norm_eps", c.rms_norm_eps},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"attention_bias", c.attention_bias},
      {"attention_dropout", 0.0},
      {"initializer_range", 0.02},
      {"use_cache", true},
      {"torch_dtype", torch_dtype},
  };
  if (qwen2) {
    j["use_sliding_window"] = false;
    j["sliding_window"] = c.max_position;
    j["max_window_layers"] = c.n_layers;
  } else {
    j["mlp_bias"] = false;
    j["pretraining_tp"] = 1;
  }
  if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_id >= 0) j["eos_token_id"] = c.eos_token_id;
  return j;
}

}  // namespace kernelrl::weights
