// Split follows tokenizers' NormalizedString::split: the pattern's matches and the gaps between
// them cover the piece, `invert` swaps which are matches, then the behaviour folds them into pieces
// and empty ones are dropped.
#include "tokenizer/pre_tokenizer.hpp"

#include <cctype>

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;

const std::string_view kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// transformers' GGUF converter's patterns for these `pre` names (gguf_tokenizer_mapping.py).
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Span {
  std::size_t begin;
  std::size_t end;
  bool flag;  // before folding: is a match; after: to be removed
};

// The matches and gaps covering `piece`, as tokenizers' Pattern::find_matches returns them.
void find_matches(const Regex& pattern, std::string_view piece, std::vector<Span>& spans) {
  thread_local std::vector<ByteRange> ranges;
  ranges.clear();
  pattern.find_all(piece, ranges);
  std::size_t prev = 0;
  for (const ByteRange& r : ranges) {
    if (prev != r.begin) spans.push_back({prev, r.begin, false});
    spans.push_back({r.begin, r.end, true});
    prev = r.end;
  }
  if (prev != piece.size()) spans.push_back({prev, piece.size(), false});
}

// Folds matches/gaps into pieces; `flag` becomes "remove" (only REMOVED sets it).
std::vector<Span> fold(const std::vector<Span>& spans, SplitBehavior behavior) {
  std::vector<Span> out;
  out.reserve(spans.size());
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::REMOVED:
      return spans;
    case SplitBehavior::ISOLATED:
      for (const Span& s : spans) out.push_back({s.begin, s.end, false});
      return out;
    case SplitBehavior::CONTIGUOUS:
      for (const Span& s : spans) {
        if (s.flag == previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back({s.begin, s.end, false});
        }
        previous_match = s.flag;
      }
      return out;
    case SplitBehavior::MERGED_WITH_PREVIOUS:
      for (const Span& s : spans) {
        if (s.flag && !previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back({s.begin, s.end, false});
        }
        previous_match = s.flag;
      }
      return out;
    case SplitBehavior::MERGED_WITH_NEXT:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->flag && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back({it->begin, it->end, false});
        }
        previous_match = it->flag;
      }
      return {out.rbegin(), out.rend()};
  }
  return out;
}

void apply_split(const SplitStep& step, std::string_view piece, std::vector<std::string_view>& out) {
  thread_local std::vector<Span> spans;
  spans.clear();
  find_matches(step.pattern, piece, spans);
  if (step.invert) {
    for (Span& s : spans) s.flag = !s.flag;
  }
  for (const Span& s : fold(spans, step.behavior)) {
    if (!s.flag && s.end > s.begin) out.push_back(piece.substr(s.begin, s.end - s.begin));
  }
}

const SplitStep& gpt2_split() {
  static const SplitStep step{*Regex::compile(kGpt2Pattern), SplitBehavior::ISOLATED, false};
  return step;
}

void apply_byte_level(const ByteLevelStep& step, std::string_view piece, PreTokenized& pre,
                      std::vector<std::string_view>& out) {
  if (step.add_prefix_space && piece.front() != ' ') {
    pre.storage.push_back(" " + std::string(piece));
    piece = pre.storage.back();
  }
  if (!step.use_regex) {
    out.push_back(piece);
    return;
  }
  apply_split(gpt2_split(), piece, out);
}

Expected<PrePreset> split_preset(std::string_view pattern, bool ignore_merges) {
  auto split = make_split_regex(pattern, SplitBehavior::ISOLATED, false);
  if (!split) return split.error();
  return PrePreset{{std::move(*split), ByteLevelStep{false, false}}, ignore_merges};
}

}  // namespace

void PreTokenizer::split(std::string_view text, PreTokenized& out) const {
  if (text.empty()) return;
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (const PreTokenizerStep& step : steps_) {
    next.clear();
    for (std::string_view piece : current) {
      if (const auto* split = std::get_if<SplitStep>(&step)) {
        apply_split(*split, piece, next);
      } else {
        apply_byte_level(std::get<ByteLevelStep>(step), piece, out, next);
      }
    }
    current.swap(next);
  }
  out.pieces.insert(out.pieces.end(), current.begin(), current.end());
}

bool PreTokenizer::has_byte_level() const {
  for (const PreTokenizerStep& step : steps_) {
    if (std::holds_alternative<ByteLevelStep>(step)) return true;
  }
  return false;
}

Expected<SplitStep> make_split_regex(std::string_view pattern, SplitBehavior behavior, bool invert) {
  auto regex = Regex::compile(pattern);
  if (!regex) return regex.error();
  return SplitStep{std::move(*regex), behavior, invert};
}

Expected<SplitStep> make_split_string(std::string_view literal, SplitBehavior behavior, bool invert) {
  if (literal.empty()) return make_split_regex("(*FAIL)", behavior, invert);  // tokenizers: matches nothing
  std::string escaped;
  for (char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) escaped += '\\';
    escaped += c;
  }
  return make_split_regex(escaped, behavior, invert);
}

Expected<SplitStep> make_digits(bool individual_digits) {
  return make_split_regex("\\p{N}", individual_digits ? SplitBehavior::ISOLATED : SplitBehavior::CONTIGUOUS, false);
}

Expected<SplitBehavior> parse_split_behavior(std::string_view name) {
  if (name == "Removed") return SplitBehavior::REMOVED;
  if (name == "Isolated") return SplitBehavior::ISOLATED;
  if (name == "MergedWithPrevious") return SplitBehavior::MERGED_WITH_PREVIOUS;
  if (name == "MergedWithNext") return SplitBehavior::MERGED_WITH_NEXT;
  if (name == "Contiguous") return SplitBehavior::CONTIGUOUS;
  return make_error("unknown Split behavior `" + std::string(name) +
                    "` (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
}

Expected<PrePreset> gguf_pre_preset(std::string_view name) {
  const ByteLevelStep gpt2{false, true};
  if (name == "smollm") {
    auto digits = make_digits(true);
    if (!digits) return digits.error();
    return PrePreset{{std::move(*digits), gpt2}, false};
  }
  if (name == "gpt2" || name == "default") return PrePreset{{gpt2}, false};
  if (name == "qwen2" || name == "deepseek-r1-qwen") return split_preset(kQwen2Pattern, false);
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return split_preset(kLlama3Pattern, true);
  return make_error("unsupported GGUF pre-tokenizer `tokenizer.ggml.pre` = `" + std::string(name) +
                    "` (supported: smollm, gpt2, default, qwen2, deepseek-r1-qwen, llama-bpe, llama3, llama-v3)");
}

}  // namespace kernelrl::tokenizer
