// Added tokens (<|im_start|>, <|endoftext|>, ...): found as whole strings in the raw text before
// pre-tokenization, leftmost-longest, as Hugging Face tokenizers' AddedVocabulary does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::tokenizer {

struct AddedToken {
  std::string content;      // the text matched, as is
  int32_t id = -1;           // assigned by Tokenizer's builder, as tokenizers does
  bool special = false;     // special tokens are text when encode(..., allow_special=false)
  bool lstrip = false;      // the match swallows whitespace on its left
  bool rstrip = false;      // ... and on its right
  bool normalized = false;  // matched after normalization (a second pass; there is no normalizer)
};

// A stretch of the text: either an added token or plain text for the pre-tokenizer.
struct Segment {
  std::size_t begin = 0;  // byte offsets
  std::size_t end = 0;
  int32_t added_id = -1;  // -1: plain text
};

class AddedTokenMatcher {
 public:
  // Fails on an empty content or a single_word token (not supported), naming it.
  static common::Expected<AddedTokenMatcher> build(std::vector<AddedToken> tokens);

  // Cuts `text` into plain and added-token segments, in order, covering it except for whitespace
  // an lstrip/rstrip token swallowed. Special tokens are skipped when !allow_special. Thread-safe.
  void segment(std::string_view text, bool allow_special, std::vector<Segment>& out) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  struct Pass {
    std::array<std::vector<std::size_t>, 256> by_first_byte;  // indices into tokens_, longest first
  };
  void find_in(const Pass& pass, std::string_view text, std::size_t begin, std::size_t end, bool allow_special,
               std::vector<Segment>& out) const;

  std::vector<AddedToken> tokens_;
  Pass raw_pass_;         // normalized == false, matched first
  Pass normalized_pass_;  // normalized == true, matched in what the first pass left
};

}  // namespace kernelrl::tokenizer
