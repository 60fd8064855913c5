// The policy model's tokenizer: byte-level BPE built from GGUF metadata (TokenizerSpec) or from a
// Hugging Face tokenizer.json, giving the same ids as Hugging Face `tokenizers` for that model.
// A Tokenizer is immutable after construction; copies share its tables, and every const method
// may be called from many threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::tokenizer {

// What a GGUF file's tokenizer.* metadata holds (llama.cpp names in the comments).
struct TokenizerSpec {
  std::string model = "gpt2";        // tokenizer.ggml.model: only "gpt2" (byte-level BPE) is supported
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens: by id, spelled in GPT-2's byte alphabet
  std::vector<std::string> merges;   // tokenizer.ggml.merges: "left right", highest priority first
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type, per id or empty: 3 control (a special
                                     // token), 4 user-defined (matched whole, not special)
  std::string pre_tokenizer;         // tokenizer.ggml.pre: "smollm", "gpt2", "default", "qwen2", "llama-bpe";
                                     // "" (absent) means "default", as in llama.cpp
  int64_t bos_id = -1;               // tokenizer.ggml.bos_token_id; -1: none
  int64_t eos_id = -1;               // tokenizer.ggml.eos_token_id
  int64_t pad_id = -1;               // tokenizer.ggml.padding_token_id
  bool add_bos = false;              // tokenizer.ggml.add_bos_token
  std::string chat_template;         // tokenizer.chat_template (Jinja text); may be empty
};

struct TokenizerParts;  // tokenizer_parts.hpp: what both constructors assemble

class Tokenizer {
 public:
  // Builds from GGUF metadata; the pre-tokenizer pipeline is the one Hugging Face uses for the
  // `pre` name. Errors name the unknown pre name, a malformed merge or an out-of-range id.
  static common::Expected<Tokenizer> from_spec(TokenizerSpec spec);

  // Reads a Hugging Face tokenizer.json (BPE model, added tokens, Sequence/Split/Digits/ByteLevel
  // pre-tokenizers, ByteLevel decoder), plus tokenizer_config.json (bos/eos/pad token,
  // add_bos_token, chat template) and chat_template.jinja beside it when present. Errors name the file and the field,
  // or the unsupported component.
  static common::Expected<Tokenizer> from_tokenizer_json(const std::filesystem::path& path);

  // Token ids of `text`; no BOS/EOS is added. Added tokens (<|im_start|>, ...) found in the text
  // become their ids; with allow_special = false special ones are tokenized as plain text.
  // Ill-formed UTF-8 is first repaired to U+FFFD (Hugging Face only takes valid strings).
  std::vector<int32_t> encode(std::string_view text, bool allow_special = true) const;

  // The text of `ids` (unknown ids are skipped), as Hugging Face decode(): the tokens' bytes
  // joined, ill-formed UTF-8 (a character split across the end) replaced by U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // The raw bytes of one token (may be part of a UTF-8 character); empty for an unknown id. For
  // streaming: join bytes yourself and cut at character boundaries.
  const std::string& token_bytes(int32_t id) const;

  // The token as the vocabulary spells it ("Ġthe", "<|im_end|>"); empty for an unknown id.
  const std::string& id_to_token(int32_t id) const;
  // The id of a token spelled as id_to_token gives it (added tokens included); nullopt if none.
  std::optional<int32_t> token_to_id(std::string_view token) const;

  bool is_special(int32_t id) const;
  int32_t vocab_size() const;  // ids are 0 .. vocab_size() - 1
  int32_t bos_id() const;      // -1 when the model has none
  int32_t eos_id() const;
  int32_t pad_id() const;
  // Whether the model expects bos_id() before a prompt (GGUF add_bos_token; tokenizer_config.json
  // add_bos_token, else a post-processor that prepends a special token). encode() never adds it.
  bool add_bos() const;
  const std::string& chat_template() const;  // Jinja text; empty when the source had none

 private:
  struct Data;
  Tokenizer() = default;
  static common::Expected<Tokenizer> build(TokenizerParts parts);
  std::shared_ptr<const Data> data_;
};

}  // namespace kernelrl::tokenizer
