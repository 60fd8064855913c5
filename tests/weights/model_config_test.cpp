// ModelConfig: config.json in and out, validation, and the config a GGUF file describes (including
// errors naming the missing key or field).
#include "weights/model_config.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "weights/gguf_config.hpp"

namespace kernelrl::weights {
namespace {

using nlohmann::json;
using testing::fixture;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

ModelConfig small_llama() {
  ModelConfig c;
  c.vocab_size = 64;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.max_position = 128;
  c.rms_norm_eps = 1e-5;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  return c;
}

bool same(const ModelConfig& a, const ModelConfig& b) {
  return a.architecture == b.architecture && a.vocab_size == b.vocab_size && a.hidden_size == b.hidden_size &&
         a.intermediate_size == b.intermediate_size && a.n_layers == b.n_layers && a.n_heads == b.n_heads &&
         a.n_kv_heads == b.n_kv_heads && a.head_dim == b.head_dim && a.rope_theta == b.rope_theta &&
         a.rms_norm_eps == b.rms_norm_eps && a.max_position == b.max_position &&
         a.tie_word_embeddings == b.tie_word_embeddings && a.attention_bias == b.attention_bias &&
         a.bos_token_id == b.bos_token_id && a.eos_token_id == b.eos_token_id;
}

TEST(WeightsModelConfig, ReadsHuggingFaceConfigs) {
  auto llama = read_hf_config(fixture("tiny_llama_hf/config.json"));
  ASSERT_TRUE(llama) << llama.error().message;
  EXPECT_TRUE(same(*llama, small_llama()));
  auto qwen = read_hf_config(fixture("tiny_qwen2_hf/config.json"));
  ASSERT_TRUE(qwen) << qwen.error().message;
  EXPECT_EQ(qwen->architecture, "qwen2");
  EXPECT_TRUE(qwen->attention_bias);
  EXPECT_TRUE(qwen->tie_word_embeddings);
  EXPECT_EQ(qwen->n_layers, 1);
  EXPECT_EQ(qwen->rope_theta, 1e6);
  EXPECT_EQ(qwen->rms_norm_eps, 1e-6);
  EXPECT_EQ(qwen->max_position, 256);
  EXPECT_EQ(qwen->eos_token_id, 2);  // given as the list [2]
}

TEST(WeightsModelConfig, DefaultsForOptionalKeys) {
  TempDir tmp;
  json j = {{"model_type", "llama"}, {"vocab_size", 100}, {"hidden_size", 64}, {"intermediate_size", 128},
            {"num_hidden_layers", 2}, {"num_attention_heads", 8}, {"eos_token_id", nullptr}};
  write_bytes(tmp / "config.json", j.dump());
  auto c = read_hf_config(tmp / "config.json");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->n_kv_heads, 8);
  EXPECT_EQ(c->head_dim, 8);
  EXPECT_EQ(c->rope_theta, 10000.0);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_EQ(c->bos_token_id, -1);
  EXPECT_EQ(c->eos_token_id, -1);
  j["model_type"] = "mistral";
  write_bytes(tmp / "config.json", j.dump());
  EXPECT_EQ(read_hf_config(tmp / "config.json")->architecture, "llama");
}

TEST(WeightsModelConfig, ErrorsNameTheFileAndField) {
  TempDir tmp;
  json good = json::parse(read_bytes(fixture("tiny_llama_hf/config.json")));
  auto path = tmp / "config.json";
  auto expect_error = [&](const json& j, const std::string& words) {
    write_bytes(path, j.dump());
    auto c = read_hf_config(path);
    ASSERT_FALSE(c) << words;
    EXPECT_NE(c.error().message.find(words), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find(path.string()), std::string::npos) << c.error().message;
  };
  for (const char* key : {"hidden_size", "vocab_size", "intermediate_size", "num_hidden_layers",
                          "num_attention_heads", "model_type"}) {
    json j = good;
    j.erase(key);
    expect_error(j, std::string("field '") + key + "' is missing");
  }
  json j = good;
  j["hidden_size"] = "32";
  expect_error(j, "field 'hidden_size' is \"32\", not an integer");
  j = good;
  j["model_type"] = "gpt2";
  expect_error(j, "'model_type' is \"gpt2\"");
  j = good;
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  expect_error(j, "rope_scaling");
  j = good;
  j["hidden_act"] = "gelu";
  expect_error(j, "hidden_act");
  j = good;
  j["num_key_value_heads"] = 3;
  expect_error(j, "not a multiple of n_kv_heads (num_key_value_heads) 3");
  j = good;
  j["tie_word_embeddings"] = 1;
  expect_error(j, "tie_word_embeddings");
  write_bytes(path, "{not json");
  EXPECT_FALSE(read_hf_config(path));
  auto missing = read_hf_config(tmp / "absent.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("absent.json"), std::string::npos);
}

TEST(WeightsModelConfig, ValidateNamesTheField) {
  ModelConfig c = small_llama();
  EXPECT_TRUE(c.validate());
  c.n_layers = 0;
  EXPECT_NE(c.validate().error().message.find("n_layers (num_hidden_layers) is 0"), std::string::npos);
  c = small_llama();
  c.head_dim = 6;
  EXPECT_NE(c.validate().error().message.find("head_dim 6"), std::string::npos);
  c = small_llama();
  c.architecture = "gpt2";
  EXPECT_FALSE(c.validate());
  c = small_llama();
  c.attention_bias = true;  // Llama's bias flag would also bias o_proj
  EXPECT_FALSE(c.validate());
  c = small_llama();
  c.eos_token_id = 64;
  EXPECT_NE(c.validate().error().message.find("eos_token_id 64"), std::string::npos);
  c = small_llama();
  c.rms_norm_eps = 0;
  EXPECT_FALSE(c.validate());
}

TEST(WeightsModelConfig, HfConfigRoundTrips) {
  TempDir tmp;
  for (bool qwen : {false, true}) {
    ModelConfig c = small_llama();
    if (qwen) {
      c.architecture = "qwen2";
      c.attention_bias = true;
      c.tie_word_embeddings = true;
      c.rope_theta = 1e6;
    }
    json j = to_hf_config(c, "bfloat16");
    EXPECT_EQ(j["architectures"][0], qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM");
    EXPECT_EQ(j["hidden_act"], "silu");
    EXPECT_EQ(j["torch_dtype"], "bfloat16");
    EXPECT_EQ(j["num_key_value_heads"], 2);
    write_bytes(tmp / "config.json", j.dump(2));
    auto back = read_hf_config(tmp / "config.json");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_TRUE(same(*back, c)) << j.dump(2);
  }
}

TEST(WeightsGgufConfig, FromTheFixtures) {
  auto llama = GgufFile::open(fixture("tiny_llama.gguf"));
  ASSERT_TRUE(llama) << llama.error().message;
  auto c = config_from_gguf(*llama);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(same(*c, small_llama()));
  auto hf = read_hf_config(fixture("tiny_qwen2_hf/config.json"));
  auto qwen = GgufFile::open(fixture("tiny_qwen2.gguf"));
  ASSERT_TRUE(qwen) << qwen.error().message;
  auto q = config_from_gguf(*qwen);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_TRUE(same(*q, *hf));
}

TEST(WeightsGgufConfig, MissingKeysAreNamed) {
  TempDir tmp;
  auto path = tmp / "m.gguf";
  write_bytes(path, testing::tiny_llama_builder().build());
  auto f = GgufFile::open(path);
  ASSERT_TRUE(f) << f.error().message;
  auto c = config_from_gguf(*f);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->head_dim, 4);
  EXPECT_TRUE(c->tie_word_embeddings);
  for (const char* key : {"llama.block_count", "llama.embedding_length", "llama.feed_forward_length",
                          "llama.attention.head_count", "llama.context_length",
                          "llama.attention.layer_norm_rms_epsilon"}) {
    write_bytes(path, testing::tiny_llama_builder(key).build());
    auto g = GgufFile::open(path);
    ASSERT_TRUE(g) << g.error().message;
    auto e = config_from_gguf(*g);
    ASSERT_FALSE(e) << key;
    EXPECT_NE(e.error().message.find(std::string("'") + key + "' is missing"), std::string::npos) << e.error().message;
    EXPECT_NE(e.error().message.find(path.string()), std::string::npos);
  }
  write_bytes(path, testing::tiny_llama_builder().str("general.architecture", "gpt2").build());
  EXPECT_FALSE(GgufFile::open(path));  // the key twice: corrupt
  testing::GgufBuilder b;
  b.str("general.architecture", "falcon");
  write_bytes(path, b.build());
  auto falcon = config_from_gguf(*GgufFile::open(path));
  ASSERT_FALSE(falcon);
  EXPECT_NE(falcon.error().message.find("\"falcon\""), std::string::npos);
  write_bytes(path, testing::tiny_llama_builder().u32("llama.vocab_size", 9).build());
  auto vocab = config_from_gguf(*GgufFile::open(path));
  ASSERT_FALSE(vocab);
  EXPECT_NE(vocab.error().message.find("llama.vocab_size' is 9 but token_embd.weight has 8 rows"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::weights
