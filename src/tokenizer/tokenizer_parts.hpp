// The pieces a Tokenizer is assembled from, in one neutral form that from_spec (GGUF metadata) and
// from_tokenizer_json both fill. Internal to the tokenizer library.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/added_tokens.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/pre_tokenizer.hpp"

namespace kernelrl::tokenizer {

struct TokenizerParts {
  std::string source;                                       // "FILE" or "TokenizerSpec", prefixes errors
  std::vector<std::string> tokens;                          // model vocabulary, spelled, by id ("" = unused)
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  BpeOptions bpe_options;
  std::vector<PreTokenizerStep> pre_steps;
  std::vector<AddedToken> added_tokens;  // ids given here are replaced (see Tokenizer::build)
  int64_t bos_id = -1;
  int64_t eos_id = -1;
  int64_t pad_id = -1;
  bool add_bos = false;
  std::string chat_template;
};

}  // namespace kernelrl::tokenizer
