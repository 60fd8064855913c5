// Pre-tokenization against Hugging Face's pieces (every Split behaviour, inverted or not, Regex and
// String patterns, Digits), the Oniguruma-to-PCRE2 rewrite, and the UTF-8 helpers.
#include <gtest/gtest.h>

#include "test_data.hpp"
#include "tokenizer/pre_tokenizer.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer {
namespace {

using nlohmann::json;

common::Expected<SplitStep> step_from_json(const json& j) {
  if (j["type"] == "Digits") return make_digits(j["individual_digits"].get<bool>());
  auto behavior = parse_split_behavior(j["behavior"].get<std::string>());
  if (!behavior) return behavior.error();
  const bool invert = j["invert"].get<bool>();
  if (j["pattern"].contains("Regex")) return make_split_regex(j["pattern"]["Regex"].get<std::string>(), *behavior, invert);
  return make_split_string(j["pattern"]["String"].get<std::string>(), *behavior, invert);
}

std::vector<std::string> pieces_of(const PreTokenizer& pre, std::string_view text) {
  PreTokenized out;
  pre.split(text, out);
  return {out.pieces.begin(), out.pieces.end()};
}

TEST(TokenizerPreTokenizer, SplitAndDigitsMatchHuggingFace) {
  const auto cases = test::read_jsonl(test::data_dir() / "pre_tokenizer_golden.jsonl");
  ASSERT_GE(cases.size(), 100u);
  for (const json& c : cases) {
    auto step = step_from_json(c["step"]);
    ASSERT_TRUE(step) << step.error().message;
    const PreTokenizer pre({std::move(*step)});
    EXPECT_EQ(pieces_of(pre, c["text"].get<std::string>()), c["pieces"].get<std::vector<std::string>>())
        << c["step"].dump() << " on " << c["text"].dump();
  }
}

TEST(TokenizerPreTokenizer, ByteLevelPrefixSpaceAndRegex) {
  const PreTokenizer gpt2({ByteLevelStep{false, true}});
  EXPECT_EQ(pieces_of(gpt2, "Hello  world's 42!\n\n"),
            (std::vector<std::string>{"Hello", " ", " world", "'s", " 42", "!", "\n\n"}));
  const PreTokenizer prefixed({ByteLevelStep{true, false}});
  EXPECT_EQ(pieces_of(prefixed, "abc"), (std::vector<std::string>{" abc"}));
  EXPECT_EQ(pieces_of(prefixed, " abc"), (std::vector<std::string>{" abc"}));
  EXPECT_EQ(pieces_of(gpt2, ""), std::vector<std::string>{});
}

TEST(TokenizerPreTokenizer, UnknownPreNameAndBehavior) {
  auto preset = gguf_pre_preset("tekken-9000");
  ASSERT_FALSE(preset);
  EXPECT_NE(preset.error().message.find("tekken-9000"), std::string::npos) << preset.error().message;
  auto behavior = parse_split_behavior("Sideways");
  ASSERT_FALSE(behavior);
  EXPECT_NE(behavior.error().message.find("Sideways"), std::string::npos);
}

TEST(TokenizerRegex, OnigurumaEscapesAreTranslated) {
  EXPECT_EQ(oniguruma_to_pcre2(R"(\s+(?!\S))"), R"([\t-\r\x{85}\p{Z}]+(?![^\t-\r\x{85}\p{Z}]))");
  EXPECT_EQ(oniguruma_to_pcre2(R"([^\s\p{L}])"), R"([^\t-\r\x{85}\p{Z}\p{L}])");
  EXPECT_EQ(oniguruma_to_pcre2(R"(\h\\s[]\s])"), R"([0-9a-fA-F]\\s[]\t-\r\x{85}\p{Z}])");
  EXPECT_EQ(oniguruma_to_pcre2(R"([[:alpha:]\s]\p{N})"), R"([[:alpha:]\t-\r\x{85}\p{Z}]\p{N})");
}

TEST(TokenizerRegex, WhiteSpaceIsOnigurumas) {
  auto regex = Regex::compile(R"(\s)");
  ASSERT_TRUE(regex) << regex.error().message;
  std::vector<ByteRange> matches;
  // U+180E (Mongolian vowel separator) is not White_Space; U+0085, U+2028, U+3000 are.
  regex->find_all("a\xE1\xA0\x8E" "b\xC2\x85" "c\xE2\x80\xA8" "d\xE3\x80\x80", matches);
  ASSERT_EQ(matches.size(), 3u);
  EXPECT_EQ(matches[0].begin, 5u);
}

TEST(TokenizerRegex, EmptyMatchesFollowOniguruma) {
  auto regex = Regex::compile("a*");
  ASSERT_TRUE(regex);
  std::vector<ByteRange> matches;
  regex->find_all("ab", matches);
  // (0,1), then the empty match at 1 is skipped (it touches the previous one), then (2,2).
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].end, 1u);
  EXPECT_EQ(matches[1].begin, 2u);
}

TEST(TokenizerRegex, CompileErrorQuotesPattern) {
  auto regex = Regex::compile("(unclosed");
  ASSERT_FALSE(regex);
  EXPECT_NE(regex.error().message.find("(unclosed"), std::string::npos) << regex.error().message;
}

TEST(TokenizerRegex, LongWhitespaceRunDoesNotExhaustTheStack) {
  auto regex = Regex::compile(std::string(kGpt2Pattern));
  ASSERT_TRUE(regex);
  std::vector<ByteRange> matches;
  const std::string text = "x" + std::string(1 << 20, ' ') + "y";
  regex->find_all(text, matches);
  ASSERT_EQ(matches.size(), 3u);  // "x", the spaces but the last, " y"
  EXPECT_EQ(matches[1].end - matches[1].begin, (1u << 20) - 1);
}

TEST(TokenizerUtf8, ValidationAndLossyRepair) {
  EXPECT_TRUE(utf8::is_valid("plain \xC3\xA9 \xF0\x9F\x9A\x80"));
  EXPECT_FALSE(utf8::is_valid("\xC0\xAF"));          // overlong
  EXPECT_FALSE(utf8::is_valid("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(utf8::is_valid("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(utf8::is_valid("\xE2\x82"));          // truncated
  // Maximal subparts: "\xE2\x82" is one U+FFFD, "\xFF" another, as Rust's from_utf8_lossy.
  EXPECT_EQ(utf8::to_valid_lossy("a\xE2\x82" "b\xFF"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(utf8::to_valid_lossy("\xF0\x9F\x9A"), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8::to_valid_lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace kernelrl::tokenizer
