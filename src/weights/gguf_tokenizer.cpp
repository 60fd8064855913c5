// read_gguf_tokenizer: the tokenizer.* keys of a GGUF file into GgufTokenizerData.
#include "weights/gguf_tokenizer.hpp"

namespace kernelrl::weights {

namespace {

common::Fallible optional_string(const GgufFile& f, const char* key, std::string& out) {
  if (!f.has(key)) return common::Ok{};
  auto v = f.get_string(key);
  if (!v) return v.error();
  out = std::move(*v);
  return common::Ok{};
}

common::Fallible optional_id(const GgufFile& f, const char* key, std::int64_t n_tokens, std::int64_t& out) {
  if (!f.has(key)) return common::Ok{};
  auto v = f.get_int(key);
  if (!v) return v.error();
  if (*v < 0 || *v >= n_tokens) {
    return common::make_error(f.path().string() + ": metadata '" + key + "' is " + std::to_string(*v) +
                              ", outside the " + std::to_string(n_tokens) + " tokens");
  }
  out = *v;
  return common::Ok{};
}

common::Fallible read_arrays(const GgufFile& f, GgufTokenizerData& t) {
  if (f.has("tokenizer.ggml.merges")) {
    auto merges = f.get_string_array("tokenizer.ggml.merges");
    if (!merges) return merges.error();
    t.merges = std::move(*merges);
  }
  if (f.has("tokenizer.ggml.token_type")) {
    auto types = f.get_int_array("tokenizer.ggml.token_type");
    if (!types) return types.error();
    if (types->size() != t.tokens.size()) {
      return common::make_error(f.path().string() + ": metadata 'tokenizer.ggml.token_type' has " +
                                std::to_string(types->size()) + " entries for " + std::to_string(t.tokens.size()) +
                                " tokens");
    }
    t.token_types.assign(types->begin(), types->end());
  }
  if (f.has("tokenizer.ggml.scores")) {
    auto scores = f.get_float_array("tokenizer.ggml.scores");
    if (!scores) return scores.error();
    if (scores->size() != t.tokens.size()) {
      return common::make_error(f.path().string() + ": metadata 'tokenizer.ggml.scores' has " +
                                std::to_string(scores->size()) + " entries for " + std::to_string(t.tokens.size()) +
                                " tokens");
    }
    t.scores.assign(scores->begin(), scores->end());
  }
  return common::Ok{};
}

}  // namespace

common::Expected<GgufTokenizerData> read_gguf_tokenizer(const GgufFile& f) {
  GgufTokenizerData t;
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) return tokens.error();
  t.tokens = std::move(*tokens);
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) return model.error();
  t.model = std::move(*model);
  if (auto ok = read_arrays(f, t); !ok) return ok.error();
  if (auto ok = optional_string(f, "tokenizer.ggml.pre", t.pre); !ok) return ok.error();
  if (auto ok = optional_string(f, "tokenizer.chat_template", t.chat_template); !ok) return ok.error();
  auto n = static_cast<std::int64_t>(t.tokens.size());
  if (auto ok = optional_id(f, "tokenizer.ggml.bos_token_id", n, t.bos_id); !ok) return ok.error();
  if (auto ok = optional_id(f, "tokenizer.ggml.eos_token_id", n, t.eos_id); !ok) return ok.error();
  if (auto ok = optional_id(f, "tokenizer.ggml.padding_token_id", n, t.pad_id); !ok) return ok.error();
  if (f.has("tokenizer.ggml.add_bos_token")) {
    auto add_bos = f.get_bool("tokenizer.ggml.add_bos_token");
    if (!add_bos) return add_bos.error();
    t.add_bos = *add_bos;
  }
  return t;
}

}  // namespace kernelrl::weights
