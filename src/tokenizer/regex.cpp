// PCRE2 wrapper. Patterns come from tokenizer.json files written for Oniguruma, whose \s is
// Unicode White_Space (PCRE2's also takes U+180E) and whose \h is a hex digit; those escapes are
// rewritten before compiling. Each thread keeps its own match data and JIT stack.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.hpp"

#include <pcre2.h>

#include <cstdlib>

#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer {

namespace {

constexpr std::string_view kWhiteSpaceClassBody = "\\t-\\r\\x{85}\\p{Z}";
constexpr std::string_view kHexClassBody = "0-9a-fA-F";

// Per-thread scratch for pcre2_match: match data big enough for any pattern's groups we read
// (only group 0) and a JIT stack larger than the default 32 KiB, for long whitespace runs.
struct MatchScratch {
  pcre2_match_data* match_data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);

  MatchScratch() {
    if (context != nullptr && jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchScratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_data_free(match_data);
  }
  MatchScratch(const MatchScratch&) = delete;
  MatchScratch& operator=(const MatchScratch&) = delete;
};

MatchScratch& scratch() {
  thread_local MatchScratch instance;
  return instance;
}

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

std::string oniguruma_to_pcre2(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  bool in_class = false;
  bool class_start = false;  // just after '[' or '[^': a ']' here is a literal
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      class_start = false;
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpaceClassBody) : "[" + std::string(kWhiteSpaceClassBody) + "]";
      } else if (e == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpaceClassBody) + "]";
      } else if (e == 'h') {
        out += in_class ? std::string(kHexClassBody) : "[" + std::string(kHexClassBody) + "]";
      } else if (e == 'H' && !in_class) {
        out += "[^" + std::string(kHexClassBody) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    out += c;
    if (!in_class && c == '[') {
      in_class = true;
      class_start = true;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const std::size_t close = pattern.find(":]", i + 2);  // POSIX class like [:alpha:]
      if (close != std::string_view::npos) {
        out.append(pattern.substr(i + 1, close + 2 - (i + 1)));
        i = close + 1;
      }
    } else if (in_class && c == ']' && !class_start) {
      in_class = false;
    }
    class_start = false;
  }
  return out;
}

common::Expected<Regex> Regex::compile(std::string_view pattern) {
  const std::string translated = oniguruma_to_pcre2(pattern);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(error_code, buffer, sizeof buffer);
    return common::make_error("tokenizer regex `" + std::string(pattern) + "` does not compile (PCRE2, at offset " +
                              std::to_string(error_offset) + "): " + reinterpret_cast<const char*>(buffer));
  }
  // PCRE2's JIT is off unless KERNELRL_PCRE2_JIT=1: its SIMD scanning has read past the end of the
  // subject in some releases (a crash when the text ends at a page boundary, in code without unwind
  // information), and the trainer crashed that way on the GPU machine (docs/train.md). The
  // interpreter gives the same matches; the tokenizer tests pass either way.
  if (const char* jit = std::getenv("KERNELRL_PCRE2_JIT"); jit != nullptr && std::string_view(jit) == "1") {
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  }
  auto compiled = std::make_shared<Compiled>();
  compiled->code = code;
  Regex regex;
  regex.compiled_ = std::move(compiled);
  regex.pattern_ = std::string(pattern);
  return regex;
}

void Regex::find_all(std::string_view text, std::vector<ByteRange>& out) const {
  MatchScratch& s = scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  std::size_t last_match_end = std::string_view::npos;
  while (start <= text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, s.match_data,
                               s.context);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && s.context != nullptr) {
      // JIT stack exhausted or another JIT limit: retry with the interpreter (no context limits).
      const int retry = pcre2_match(compiled_->code, subject, text.size(), start,
                                    PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, s.match_data, nullptr);
      if (retry < 0) return;
    } else if (rc < 0) {
      return;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(s.match_data);
    const std::size_t begin = ovector[0];
    const std::size_t end = ovector[1];
    if (begin == end && end == last_match_end) {
      if (begin >= text.size()) return;
      const std::size_t n = utf8::valid_sequence_length(text, begin);
      start = begin + (n == 0 ? 1 : n);
      continue;
    }
    out.push_back({begin, end});
    last_match_end = end;
    start = end;
  }
}

}  // namespace kernelrl::tokenizer
