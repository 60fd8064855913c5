// Errors a user can act on: each names the file, the field or the value at fault.
#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.hpp"

namespace kernelrl::tokenizer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A minimal valid tokenizer.json, to be broken one field at a time.
json minimal_tokenizer_json() {
  return json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [{"id": 0, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false,
                      "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    "post_processor": null,
    "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
    "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
              "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
              "vocab": {"<|end|>": 0, "a": 1, "b": 2, "ab": 3},
              "merges": [["a", "b"]]}
  })");
}

class TokenizerJsonErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernelrl_tokenizer_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }

  // The error from loading `j`; fails the test if it loads.
  std::string error_of(const json& j) {
    auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", j.dump()));
    EXPECT_FALSE(t) << "loaded, but an error was expected";
    return t ? "" : t.error().message;
  }

  fs::path dir_;
};

TEST_F(TokenizerJsonErrors, MinimalFileLoads) {
  auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", minimal_tokenizer_json().dump()));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->encode("ab<|end|>a"), (std::vector<int32_t>{3, 0, 1}));
  EXPECT_EQ(t->bos_id(), -1);
  EXPECT_EQ(t->chat_template(), "");
}

TEST_F(TokenizerJsonErrors, MergesAsStringsLoad) {
  json j = minimal_tokenizer_json();
  j["model"]["merges"] = json::array({"a b"});
  auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", j.dump()));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->encode("ab"), (std::vector<int32_t>{3}));
}

TEST_F(TokenizerJsonErrors, AddBosFromPostProcessorOrConfig) {
  json j = minimal_tokenizer_json();
  j["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<|end|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "pair": [], "special_tokens": {}})");
  auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", j.dump()));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(t->add_bos());
  EXPECT_EQ(t->encode("ab"), (std::vector<int32_t>{3}));  // encode itself never adds it
  write("tokenizer_config.json", R"({"add_bos_token": false})");
  t = Tokenizer::from_tokenizer_json(dir_ / "tokenizer.json");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->add_bos());
}

TEST_F(TokenizerJsonErrors, MissingFileNamesIt) {
  auto t = Tokenizer::from_tokenizer_json(dir_ / "nope" / "tokenizer.json");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("nope/tokenizer.json"), std::string::npos) << t.error().message;
}

TEST_F(TokenizerJsonErrors, NotJson) {
  auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", "{\"model\": "));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("not valid JSON"), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("tokenizer.json"), std::string::npos);
}

TEST_F(TokenizerJsonErrors, UnsupportedComponentsAreNamed) {
  json j = minimal_tokenizer_json();
  j["model"]["type"] = "WordPiece";
  EXPECT_NE(error_of(j).find("WordPiece"), std::string::npos);

  j = minimal_tokenizer_json();
  j["normalizer"] = {{"type", "NFC"}};
  EXPECT_NE(error_of(j).find("NFC"), std::string::npos);

  j = minimal_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "_"}};
  EXPECT_NE(error_of(j).find("Metaspace"), std::string::npos);

  j = minimal_tokenizer_json();
  j["decoder"] = {{"type", "WordPiece"}};
  EXPECT_NE(error_of(j).find("decoder"), std::string::npos);

  j = minimal_tokenizer_json();
  j["model"]["dropout"] = 0.1;
  EXPECT_NE(error_of(j).find("model.dropout"), std::string::npos);

  j = minimal_tokenizer_json();
  j["added_tokens"][0]["single_word"] = true;
  EXPECT_NE(error_of(j).find("added_tokens[0].single_word"), std::string::npos);

  j = minimal_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", " "}}}, {"behavior", "Isolated"}, {"invert", false}};
  EXPECT_NE(error_of(j).find("no ByteLevel step"), std::string::npos);
}

TEST_F(TokenizerJsonErrors, BadFieldsAreNamed) {
  json j = minimal_tokenizer_json();
  j["model"]["merges"] = json::array({json::array({"a", "c"})});
  const std::string missing = error_of(j);
  EXPECT_NE(missing.find("merge 0"), std::string::npos) << missing;
  EXPECT_NE(missing.find("`c`"), std::string::npos) << missing;

  j = minimal_tokenizer_json();
  j["model"]["merges"] = json::array({"a b c"});
  EXPECT_NE(error_of(j).find("model.merges[0]"), std::string::npos);

  j = minimal_tokenizer_json();
  j["model"].erase("vocab");
  EXPECT_NE(error_of(j).find("model.vocab"), std::string::npos);

  j = minimal_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", json::array({{{"type", "Split"}, {"pattern", {{"Regex", "("}}},
                                                        {"behavior", "Isolated"}, {"invert", false}}})}};
  const std::string regex = error_of(j);
  EXPECT_NE(regex.find("pre_tokenizer.pretokenizers[0].pattern"), std::string::npos) << regex;

  j = minimal_tokenizer_json();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", " "}}}, {"behavior", "Sideways"}, {"invert", false}};
  EXPECT_NE(error_of(j).find("Sideways"), std::string::npos);

  j = minimal_tokenizer_json();
  j["model"]["unk_token"] = "<unk>";
  EXPECT_NE(error_of(j).find("model.unk_token"), std::string::npos);
}

TEST_F(TokenizerJsonErrors, ConfigBesideIsReadAndChecked) {
  write("tokenizer_config.json", R"({"eos_token": {"content": "<|end|>"}, "bos_token": null,
                                      "chat_template": "{{ '<|im_start|>' }}<|im_end|>"})");
  auto t = Tokenizer::from_tokenizer_json(write("tokenizer.json", minimal_tokenizer_json().dump()));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->eos_id(), 0);
  EXPECT_EQ(t->bos_id(), -1);
  EXPECT_EQ(t->chat_template(), "{{ '<|im_start|>' }}<|im_end|>");

  write("chat_template.jinja", "from the jinja file");
  t = Tokenizer::from_tokenizer_json(dir_ / "tokenizer.json");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->chat_template(), "from the jinja file");

  write("tokenizer_config.json", R"({"eos_token": "<|missing|>"})");
  const std::string error = error_of(minimal_tokenizer_json());
  EXPECT_NE(error.find("tokenizer_config.json: field `eos_token`"), std::string::npos) << error;
  EXPECT_NE(error.find("<|missing|>"), std::string::npos) << error;
}

TEST(TokenizerSpecErrors, ValuesAtFaultAreNamed) {
  TokenizerSpec spec;
  spec.tokens = {"a", "b", "ab"};
  spec.merges = {"a b"};
  spec.pre_tokenizer = "gpt2";
  ASSERT_TRUE(Tokenizer::from_spec(spec));

  TokenizerSpec s = spec;
  s.pre_tokenizer = "mystery-pre";
  auto t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("mystery-pre"), std::string::npos) << t.error().message;

  s = spec;
  s.merges = {"ab"};
  t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("merge 0 `ab`"), std::string::npos) << t.error().message;

  s = spec;
  s.merges = {"b a"};
  t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("`ba`"), std::string::npos) << t.error().message;

  s = spec;
  s.token_types = {1, 1};
  t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("2 token_types for 3 tokens"), std::string::npos) << t.error().message;

  s = spec;
  s.eos_id = 3;
  t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("eos id 3"), std::string::npos) << t.error().message;

  s = spec;
  s.tokens.clear();
  EXPECT_FALSE(Tokenizer::from_spec(s));

  s = spec;
  s.model = "llama";
  t = Tokenizer::from_spec(s);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("tokenizer.ggml.model `llama`"), std::string::npos) << t.error().message;

  s = spec;
  s.pre_tokenizer = "";  // absent in the GGUF: llama.cpp's "default"
  s.add_bos = true;
  t = Tokenizer::from_spec(s);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(t->add_bos());
}

}  // namespace
}  // namespace kernelrl::tokenizer
