// The tokenizer a GGUF file carries in its tokenizer.ggml.* / tokenizer.chat_template metadata, as
// plain data for the tokenizer subsystem (which owns the encoding rules). No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "weights/gguf.hpp"

namespace kernelrl::weights {

struct GgufTokenizerData {
  std::vector<std::string> tokens;    // tokenizer.ggml.tokens: id -> token text (GPT-2 byte-level for "gpt2")
  std::vector<std::string> merges;    // tokenizer.ggml.merges: "a b" in rank order; empty for SentencePiece
  std::vector<std::int32_t> token_types;  // tokenizer.ggml.token_type (1 normal, 2 unknown, 3 control,
                                          // 4 user-defined, 5 unused, 6 byte); empty when absent
  std::vector<float> scores;          // tokenizer.ggml.scores (SentencePiece); empty when absent
  std::string model;                  // tokenizer.ggml.model: "gpt2" (BPE), "llama" (SentencePiece), ...
  std::string pre;                    // tokenizer.ggml.pre: pre-tokenizer name ("smollm", "qwen2", ...); "" when absent
  std::string chat_template;          // tokenizer.chat_template (Jinja); "" when absent
  std::int64_t bos_id = -1;           // tokenizer.ggml.bos_token_id; -1: none
  std::int64_t eos_id = -1;           // tokenizer.ggml.eos_token_id; -1: none
  std::int64_t pad_id = -1;           // tokenizer.ggml.padding_token_id; -1: none
  bool add_bos = false;               // tokenizer.ggml.add_bos_token; false when absent
};

// Reads the tokenizer metadata of `file`. tokens and model are required; the rest is optional.
// Errors name the file and the key (missing, of another type, token_types of another length than
// tokens, a special id outside the vocabulary).
common::Expected<GgufTokenizerData> read_gguf_tokenizer(const GgufFile& file);

}  // namespace kernelrl::weights
