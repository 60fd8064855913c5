// A hand-built vocabulary whose merges are worked out by hand: merge order by rank, leftmost on
// ties, stale candidates, the smollm digit split, added tokens (control and user-defined), bytes
// missing from the vocabulary, and the byte alphabet.
#include <gtest/gtest.h>

#include "tokenizer/byte_level.hpp"
#include "tokenizer/tokenizer.hpp"

namespace kernelrl::tokenizer {
namespace {

// Ids:                0          1    2    3    4         5     6      7      8     9    10   11
const std::vector<std::string> kTokens = {"<|eot|>", "a", "b", "c", "\xC4\xA0", "ab", "abc", "bc", "aa", "aaaa",
                                          "1", "2",
                                          // 12    13          14                     15
                                          "12", "<tool>", "\xC4\xA0" "abc", "\xE4\xB8\xAD"};  // "Ġabc", "中"

TokenizerSpec hand_spec(const std::string& pre = "gpt2") {
  TokenizerSpec spec;
  spec.tokens = kTokens;
  spec.merges = {"a b", "ab c", "b c", "a a", "aa aa", "1 2", "\xC4\xA0 abc"};
  spec.token_types.assign(kTokens.size(), 1);
  spec.token_types[0] = 3;   // control: special
  spec.token_types[13] = 4;  // user-defined: matched whole, not special
  spec.pre_tokenizer = pre;
  spec.bos_id = 0;
  spec.eos_id = 0;
  return spec;
}

Tokenizer hand_tokenizer(const std::string& pre = "gpt2") {
  auto t = Tokenizer::from_spec(hand_spec(pre));
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return *t;
}

using Ids = std::vector<int32_t>;

TEST(TokenizerBpe, MergesByRank) {
  const Tokenizer tok = hand_tokenizer();
  EXPECT_EQ(tok.encode("abc"), (Ids{6}));    // a b -> ab (rank 0), then ab c -> abc (rank 1)
  EXPECT_EQ(tok.encode("bca"), (Ids{7, 1}));  // b c (rank 2); "bc a" is no merge
  EXPECT_EQ(tok.encode("cab"), (Ids{3, 5}));
  // " abc": Ġ a has no merge; a b, ab c, then Ġ abc (rank 6).
  EXPECT_EQ(tok.encode(" abc"), (Ids{14}));
  // "abcbc": a b first (rank 0) even though b c appears twice; then ab c; the last b c.
  EXPECT_EQ(tok.encode("abcbc"), (Ids{6, 7}));
}

TEST(TokenizerBpe, LeftmostOnTiesAndStaleCandidates) {
  const Tokenizer tok = hand_tokenizer();
  EXPECT_EQ(tok.encode("aa"), (Ids{8}));
  EXPECT_EQ(tok.encode("aaa"), (Ids{8, 1}));       // the leftmost a a wins; "aa a" is no merge
  EXPECT_EQ(tok.encode("aaaa"), (Ids{9}));         // aa, aa, then aa aa
  EXPECT_EQ(tok.encode("aaaaa"), (Ids{9, 1}));     // the candidates at 1 and 3 went stale
  EXPECT_EQ(tok.encode("aaaaaa"), (Ids{9, 8}));
}

TEST(TokenizerBpe, PreNameDecidesDigitSplitting) {
  EXPECT_EQ(hand_tokenizer("gpt2").encode("12"), (Ids{12}));       // GPT-2 keeps the digit run together
  EXPECT_EQ(hand_tokenizer("smollm").encode("12"), (Ids{10, 11}));  // Digits(individual) splits first
  EXPECT_EQ(hand_tokenizer("qwen2").encode("12"), (Ids{10, 11}));   // Qwen2's \p{N}: one digit each
  EXPECT_EQ(hand_tokenizer("llama-bpe").encode("12"), (Ids{12}));   // Llama 3's \p{N}{1,3}
}

TEST(TokenizerBpe, PreTokenizerPiecesAreNotMergedAcross) {
  const Tokenizer tok = hand_tokenizer();
  // "ab ab": pieces "ab", " ab"; the second is Ġ then ab (no "Ġ ab" merge).
  EXPECT_EQ(tok.encode("ab ab"), (Ids{5, 4, 5}));
  EXPECT_EQ(tok.encode("  "), (Ids{4, 4}));
}

TEST(TokenizerBpe, AddedTokens) {
  const Tokenizer tok = hand_tokenizer();
  EXPECT_EQ(tok.encode("ab<|eot|>c"), (Ids{5, 0, 3}));
  EXPECT_EQ(tok.encode("<tool>abc<tool>"), (Ids{13, 6, 13}));
  EXPECT_TRUE(tok.is_special(0));
  EXPECT_FALSE(tok.is_special(13));
  // Special tokens as text: '<', '|', ... are not in this vocabulary, so (as in Hugging Face,
  // which has no unk token here) those bytes are dropped; "e", "o", "t" too.
  EXPECT_EQ(tok.encode("ab<|eot|>c", /*allow_special=*/false), (Ids{5, 3}));
  // A user-defined token is not special: found even with specials off, kept by skip_special.
  EXPECT_EQ(tok.encode("<tool>", false), (Ids{13}));
  EXPECT_EQ(tok.decode(Ids{5, 0, 13, 3}, /*skip_special=*/true), "ab<tool>c");
  EXPECT_EQ(tok.decode(Ids{5, 0, 13, 3}), "ab<|eot|><tool>c");
}

TEST(TokenizerBpe, MissingBytesAreDropped) {
  const Tokenizer tok = hand_tokenizer();
  EXPECT_EQ(tok.encode("xyz"), Ids{});
  EXPECT_EQ(tok.encode("xaby"), (Ids{5}));
  EXPECT_EQ(tok.encode(""), Ids{});
}

TEST(TokenizerBpe, VocabularyAccessors) {
  const Tokenizer tok = hand_tokenizer();
  EXPECT_EQ(tok.vocab_size(), 16);
  EXPECT_EQ(tok.bos_id(), 0);
  EXPECT_EQ(tok.eos_id(), 0);
  EXPECT_EQ(tok.pad_id(), -1);
  EXPECT_EQ(tok.token_to_id("abc"), 6);
  EXPECT_EQ(tok.token_to_id("<tool>"), 13);
  EXPECT_EQ(tok.token_bytes(14), " abc");
  EXPECT_EQ(tok.decode(Ids{4, 6, 99, -3}), " abc");  // unknown ids are skipped
  // "中" is outside the byte alphabet: respelled as its UTF-8 bytes, as transformers' converter does.
  EXPECT_EQ(tok.id_to_token(15), byte_level::spell("\xE4\xB8\xAD"));
  EXPECT_EQ(tok.token_bytes(15), "\xE4\xB8\xAD");
}

TEST(TokenizerBpe, ByteAlphabet) {
  EXPECT_EQ(byte_level::spell(" \n\t!~"), "\xC4\xA0\xC4\x8A\xC4\x89!~");  // Ġ Ċ ĉ ! ~
  EXPECT_EQ(byte_level::spell_byte(0x00), "\xC4\x80");                      // U+0100
  EXPECT_EQ(byte_level::spell_byte(0xAD), "\xC5\x83");                      // soft hyphen -> U+0143
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_EQ(byte_level::unspell(byte_level::spell(one)), one) << "byte " << b;
  }
  EXPECT_EQ(byte_level::unspell("\xE4\xB8\xAD"), std::nullopt);  // 中 is not in the alphabet
}

}  // namespace
}  // namespace kernelrl::tokenizer
