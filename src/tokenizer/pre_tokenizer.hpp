// Pre-tokenization: cutting text into the pieces BPE runs on, as Hugging Face tokenizers' Split,
// Digits and ByteLevel pre-tokenizers do (applied in sequence, each refining the previous pieces),
// and the pipelines llama.cpp's GGUF `tokenizer.ggml.pre` names stand for.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/expected.hpp"
#include "tokenizer/regex.hpp"

namespace kernelrl::tokenizer {

// What a Split does with the pieces its pattern matches (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior {
  REMOVED,               // matches are dropped
  ISOLATED,              // each match is a piece of its own
  MERGED_WITH_PREVIOUS,  // a match joins the piece before it
  MERGED_WITH_NEXT,      // a match joins the piece after it
  CONTIGUOUS,            // adjacent matches form one piece
};

// tokenizers' Split (and Digits, which is a Split on \p{N}: individual -> ISOLATED, else CONTIGUOUS).
struct SplitStep {
  Regex pattern;
  SplitBehavior behavior = SplitBehavior::ISOLATED;
  bool invert = false;  // the pattern matches the pieces to keep; the gaps are the delimiters
};

// tokenizers' ByteLevel pre-tokenizer. The byte spelling itself needs no step here: BPE runs on raw
// bytes (see byte_level.hpp).
struct ByteLevelStep {
  bool add_prefix_space = false;  // prepend ' ' to every piece that does not start with one
  bool use_regex = true;          // split with GPT-2's pattern
};

using PreTokenizerStep = std::variant<SplitStep, ByteLevelStep>;

// Pieces of one text; views point into the text or into `storage` (prefixed copies).
struct PreTokenized {
  std::vector<std::string_view> pieces;
  std::deque<std::string> storage;
};

class PreTokenizer {
 public:
  explicit PreTokenizer(std::vector<PreTokenizerStep> steps) : steps_(std::move(steps)) {}

  // Cuts `text` (valid UTF-8) into pieces, appending to `out`. Empty pieces are dropped.
  // Thread-safe.
  void split(std::string_view text, PreTokenized& out) const;

  bool has_byte_level() const;
  const std::vector<PreTokenizerStep>& steps() const { return steps_; }

 private:
  std::vector<PreTokenizerStep> steps_;
};

// Builders for the steps tokenizer.json names.
common::Expected<SplitStep> make_split_regex(std::string_view pattern, SplitBehavior behavior, bool invert);
common::Expected<SplitStep> make_split_string(std::string_view literal, SplitBehavior behavior, bool invert);
common::Expected<SplitStep> make_digits(bool individual_digits);
// "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous".
common::Expected<SplitBehavior> parse_split_behavior(std::string_view name);

// GPT-2's pattern, which ByteLevel{use_regex} splits with.
extern const std::string_view kGpt2Pattern;

// The pipeline for a GGUF `tokenizer.ggml.pre` name, as Hugging Face tokenizes that model:
// "smollm" (Digits, then GPT-2), "gpt2" and "default" (GPT-2), "qwen2", "llama-bpe" (their Split
// pattern, then ByteLevel without regex; llama-bpe also ignores merges for whole-vocabulary words).
struct PrePreset {
  std::vector<PreTokenizerStep> steps;
  bool ignore_merges = false;  // BPE: a piece that is a vocabulary entry is emitted whole
};
common::Expected<PrePreset> gguf_pre_preset(std::string_view name);

}  // namespace kernelrl::tokenizer
