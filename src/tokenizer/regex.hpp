// A compiled pre-tokenizer pattern (PCRE2, UTF + Unicode properties, JIT when available) that
// finds matches the way Hugging Face tokenizers' Oniguruma regexes do.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::tokenizer {

struct ByteRange {
  std::size_t begin = 0;  // byte offsets into the searched text
  std::size_t end = 0;
};

class Regex {
 public:
  // Compiles an Oniguruma-flavoured pattern as tokenizer.json spells it (\s, \S and \h are
  // translated to their Oniguruma meaning); the error quotes the pattern and PCRE2's message.
  static common::Expected<Regex> compile(std::string_view pattern);

  // Appends the successive non-overlapping matches in `text`, which must be valid UTF-8. An empty
  // match right where the previous match ended is skipped, as Oniguruma's find_iter does.
  // Thread-safe: match scratch space is per thread.
  void find_all(std::string_view text, std::vector<ByteRange>& out) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
  std::string pattern_;
};

// The Oniguruma pattern rewritten for PCRE2 (exposed for tests).
std::string oniguruma_to_pcre2(std::string_view pattern);

}  // namespace kernelrl::tokenizer
