// read_gguf_tokenizer on the fixture (written by gguf-py's tokenizer helpers) and its errors.
#include "weights/gguf_tokenizer.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace kernelrl::weights {
namespace {

using testing::fixture;
using testing::TempDir;
using testing::write_bytes;

TEST(WeightsGgufTokenizer, ReadsTheFixture) {
  auto f = GgufFile::open(fixture("tiny_llama.gguf"));
  ASSERT_TRUE(f) << f.error().message;
  auto t = read_gguf_tokenizer(*f);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->model, "gpt2");
  EXPECT_EQ(t->pre, "smollm");
  ASSERT_EQ(t->tokens.size(), 64u);
  EXPECT_EQ(t->tokens[1], "<|im_start|>");
  EXPECT_EQ(t->tokens[3], "a");
  EXPECT_EQ(t->tokens[32], "\xc4\xa0" "a");  // "Ġa"
  EXPECT_EQ(t->merges, (std::vector<std::string>{"a b", "c d", "ab cd", "\xc4\xa0 a", "h e", "l l", "ll o", "he llo"}));
  ASSERT_EQ(t->token_types.size(), 64u);
  EXPECT_EQ(t->token_types[0], 3);
  EXPECT_EQ(t->token_types[5], 1);
  EXPECT_TRUE(t->scores.empty());
  EXPECT_EQ(t->bos_id, 1);
  EXPECT_EQ(t->eos_id, 2);
  EXPECT_EQ(t->pad_id, 2);
  EXPECT_FALSE(t->add_bos);
  EXPECT_EQ(t->chat_template.rfind("{% for m in messages %}", 0), 0u);
}

TEST(WeightsGgufTokenizer, ErrorsNameTheKey) {
  TempDir tmp;
  auto path = tmp / "t.gguf";
  testing::GgufBuilder none;
  none.str("general.architecture", "llama");
  write_bytes(path, none.build());
  auto missing = read_gguf_tokenizer(*GgufFile::open(path));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'tokenizer.ggml.tokens' is missing"), std::string::npos);

  testing::GgufBuilder no_model;
  no_model.strings("tokenizer.ggml.tokens", {"a", "b"});
  write_bytes(path, no_model.build());
  auto model = read_gguf_tokenizer(*GgufFile::open(path));
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().message.find("'tokenizer.ggml.model' is missing"), std::string::npos);

  testing::GgufBuilder bad_id;
  bad_id.strings("tokenizer.ggml.tokens", {"a", "b"}).str("tokenizer.ggml.model", "gpt2").u32("tokenizer.ggml.eos_token_id", 5);
  write_bytes(path, bad_id.build());
  auto id = read_gguf_tokenizer(*GgufFile::open(path));
  ASSERT_FALSE(id);
  EXPECT_NE(id.error().message.find("'tokenizer.ggml.eos_token_id' is 5, outside the 2 tokens"), std::string::npos);

  testing::GgufBuilder wrong_type;
  wrong_type.strings("tokenizer.ggml.tokens", {"a"}).str("tokenizer.ggml.model", "gpt2").u32("tokenizer.ggml.merges", 1);
  write_bytes(path, wrong_type.build());
  auto merges = read_gguf_tokenizer(*GgufFile::open(path));
  ASSERT_FALSE(merges);
  EXPECT_NE(merges.error().message.find("tokenizer.ggml.merges"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::weights
