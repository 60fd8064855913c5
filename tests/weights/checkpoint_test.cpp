// load_checkpoint / save_hf_checkpoint on the fixtures: GGUF (dequantised, Llama Q/K un-permuted)
// equals the Hugging Face checkpoint made from the original tensors; Qwen2 GGUF equals its HF
// folder; save -> load round trips; failed saves leave the previous checkpoint intact.
#include "weights/checkpoint.hpp"

#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>

#include "test_support.hpp"
#include "weights/dequantize.hpp"
#include "weights/gguf.hpp"
#include "weights/safetensors.hpp"
#include "weights/tensor_names.hpp"

namespace kernelrl::weights {
namespace {

using testing::fixture;
using testing::read_bytes;
using testing::TempDir;

Checkpoint load_ok(const std::filesystem::path& p, at::ScalarType dtype = at::kFloat) {
  auto ck = load_checkpoint(p, dtype);
  if (!ck) ADD_FAILURE() << ck.error().message;
  return std::move(*ck);
}

void expect_same_tensors(const Checkpoint& a, const Checkpoint& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    auto it = b.tensors.find(name);
    ASSERT_NE(it, b.tensors.end()) << name;
    EXPECT_EQ(t.scalar_type(), it->second.scalar_type()) << name;
    EXPECT_TRUE(t.equal(it->second)) << name << " differs";
  }
}

TEST(WeightsCheckpoint, LlamaGgufEqualsTheHuggingFaceTensors) {
  Checkpoint gguf = load_ok(fixture("tiny_llama.gguf"));
  Checkpoint hf = load_ok(fixture("tiny_llama_hf"));
  EXPECT_EQ(gguf.format, "gguf");
  EXPECT_EQ(hf.format, "safetensors");
  EXPECT_EQ(gguf.source, fixture("tiny_llama.gguf"));
  EXPECT_EQ(gguf.tensors.size(), 21u);
  EXPECT_EQ(gguf.tensors.count("lm_head.weight"), 1u);
  EXPECT_EQ(gguf.config.n_kv_heads, hf.config.n_kv_heads);
  expect_same_tensors(gguf, hf);  // includes both layers' q_proj / k_proj, un-permuted
  for (const auto& [name, t] : gguf.tensors) {
    EXPECT_EQ(t.scalar_type(), at::kFloat);
    EXPECT_TRUE(t.is_contiguous());
  }
}

TEST(WeightsCheckpoint, WithoutUnpermutingQAndKWouldDiffer) {
  // Guards the test above: the stored (permuted) rows are not the HF rows.
  auto file = GgufFile::open(fixture("tiny_llama.gguf"));
  ASSERT_TRUE(file);
  Checkpoint hf = load_ok(fixture("tiny_llama_hf"));
  auto raw = dequantize_tensor(*file, *file->find_tensor("blk.0.attn_q.weight"));
  ASSERT_TRUE(raw);
  const at::Tensor& q = hf.tensors.at("model.layers.0.self_attn.q_proj.weight");
  EXPECT_NE(std::memcmp(raw->data(), q.data_ptr<float>(), raw->size() * 4), 0);
  permute_rows(std::span<float>(q.data_ptr<float>(), raw->size()), 32, 32, 4);
  EXPECT_EQ(std::memcmp(raw->data(), q.data_ptr<float>(), raw->size() * 4), 0);
}

TEST(WeightsCheckpoint, Qwen2GgufEqualsItsHuggingFaceFolder) {
  Checkpoint gguf = load_ok(fixture("tiny_qwen2.gguf"));
  Checkpoint hf = load_ok(fixture("tiny_qwen2_hf"));
  EXPECT_EQ(gguf.config.architecture, "qwen2");
  EXPECT_TRUE(gguf.config.tie_word_embeddings);
  EXPECT_EQ(gguf.tensors.size(), 14u);
  EXPECT_EQ(gguf.tensors.count("lm_head.weight"), 0u);
  EXPECT_EQ(gguf.tensors.count("model.layers.0.self_attn.k_proj.bias"), 1u);
  expect_same_tensors(gguf, hf);
}

TEST(WeightsCheckpoint, CastsToTheRequestedDtype) {
  Checkpoint f32 = load_ok(fixture("tiny_llama.gguf"));
  Checkpoint bf16 = load_ok(fixture("tiny_llama.gguf"), at::kBFloat16);
  Checkpoint hf_bf16 = load_ok(fixture("tiny_qwen2_hf"), at::kBFloat16);
  for (const auto& [name, t] : bf16.tensors) {
    EXPECT_EQ(t.scalar_type(), at::kBFloat16) << name;
    EXPECT_TRUE(t.equal(f32.tensors.at(name).to(at::kBFloat16))) << name;
  }
  for (const auto& [name, t] : hf_bf16.tensors) EXPECT_EQ(t.scalar_type(), at::kBFloat16) << name;
}

TEST(WeightsCheckpoint, SaveThenLoadRoundTrips) {
  TempDir tmp;
  for (const char* source : {"tiny_llama.gguf", "tiny_qwen2.gguf"}) {
    Checkpoint original = load_ok(fixture(source));
    auto dir = tmp / (std::string(source) + ".hf");
    auto saved = save_hf_checkpoint(dir, original.config, original.tensors, "float32");
    ASSERT_TRUE(saved) << saved.error().message;
    Checkpoint back = load_ok(dir);
    expect_same_tensors(original, back);
    EXPECT_EQ(back.config.architecture, original.config.architecture);
    EXPECT_EQ(back.config.n_kv_heads, original.config.n_kv_heads);
    EXPECT_EQ(back.config.rope_theta, original.config.rope_theta);
    EXPECT_EQ(back.config.rms_norm_eps, original.config.rms_norm_eps);
    EXPECT_EQ(back.config.tie_word_embeddings, original.config.tie_word_embeddings);
    EXPECT_EQ(back.config.eos_token_id, original.config.eos_token_id);
    auto generation = nlohmann::json::parse(read_bytes(dir / "generation_config.json"));
    EXPECT_EQ(generation["bos_token_id"], 1);
    EXPECT_EQ(generation["eos_token_id"], 2);
    auto st = SafetensorsFile::open(dir / "model.safetensors");
    ASSERT_TRUE(st);
    EXPECT_EQ(st->metadata().at("format"), "pt");  // transformers refuses the file without it
    EXPECT_FALSE(std::filesystem::exists(tmp / (std::string(source) + ".hf.tmp")));
  }
}

TEST(WeightsCheckpoint, SavesBfloat16) {
  TempDir tmp;
  Checkpoint original = load_ok(fixture("tiny_llama.gguf"));
  ASSERT_TRUE(save_hf_checkpoint(tmp / "bf16", original.config, original.tensors, "bfloat16"));
  auto config = nlohmann::json::parse(read_bytes(tmp / "bf16" / "config.json"));
  EXPECT_EQ(config["torch_dtype"], "bfloat16");
  auto st = SafetensorsFile::open(tmp / "bf16" / "model.safetensors");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->find("model.norm.weight")->dtype, SafetensorsDtype::BF16);
  Checkpoint back = load_ok(tmp / "bf16", at::kBFloat16);
  for (const auto& [name, t] : back.tensors) {
    EXPECT_TRUE(t.equal(original.tensors.at(name).to(at::kBFloat16))) << name;
  }
}

TEST(WeightsCheckpoint, FailedSaveKeepsTheExistingCheckpoint) {
  TempDir tmp;
  Checkpoint original = load_ok(fixture("tiny_llama.gguf"));
  auto dir = tmp / "ck";
  ASSERT_TRUE(save_hf_checkpoint(dir, original.config, original.tensors, "float32"));
  std::string before = read_bytes(dir / "model.safetensors");

  auto missing = original.tensors;
  missing.erase("model.layers.1.mlp.up_proj.weight");
  auto e = save_hf_checkpoint(dir, original.config, missing, "float32");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("'model.layers.1.mlp.up_proj.weight' is missing"), std::string::npos);
  auto extra = original.tensors;
  extra["model.layers.9.mlp.up_proj.weight"] = at::randn({2});
  EXPECT_FALSE(save_hf_checkpoint(dir, original.config, extra, "float32"));
  auto reshaped = original.tensors;
  reshaped["model.norm.weight"] = at::randn({31});
  EXPECT_FALSE(save_hf_checkpoint(dir, original.config, reshaped, "float32"));
  EXPECT_FALSE(save_hf_checkpoint(dir, original.config, original.tensors, "int8"));
  ModelConfig bad = original.config;
  bad.n_heads = 0;
  EXPECT_FALSE(save_hf_checkpoint(dir, bad, original.tensors, "float32"));
  EXPECT_EQ(read_bytes(dir / "model.safetensors"), before);
  EXPECT_FALSE(std::filesystem::exists(tmp / "ck.tmp"));

  // A successful save replaces it, and leaves no .old / .tmp behind.
  auto changed = original.tensors;
  changed["model.norm.weight"] = changed["model.norm.weight"].mul(2);
  ASSERT_TRUE(save_hf_checkpoint(dir, original.config, changed, "float32"));
  EXPECT_TRUE(load_ok(dir).tensors.at("model.norm.weight").equal(changed.at("model.norm.weight")));
  EXPECT_FALSE(std::filesystem::exists(tmp / "ck.old"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "ck.tmp"));
}

TEST(WeightsCheckpoint, LoadErrorsNameTheFileAndTensor) {
  TempDir tmp;
  auto missing = load_checkpoint(tmp / "absent.gguf");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("absent.gguf"), std::string::npos);
  // A minimal hand-made GGUF loads; adding an unknown or superfluous tensor makes it an error.
  auto path = tmp / "partial.gguf";
  auto builder = testing::tiny_llama_builder();
  testing::write_bytes(path, builder.build());
  auto ok = load_checkpoint(path);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->tensors.size(), 11u);
  testing::GgufBuilder b = testing::tiny_llama_builder();
  b.tensor("rope_freqs.weight", {4});
  testing::write_bytes(path, b.build());
  auto unknown = load_checkpoint(path);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("'rope_freqs.weight'"), std::string::npos) << unknown.error().message;
  b = testing::tiny_llama_builder();
  b.tensor("blk.0.attn_q.bias", {8});
  testing::write_bytes(path, b.build());
  auto extra = load_checkpoint(path);
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.error().message.find("model.layers.0.self_attn.q_proj.bias"), std::string::npos);
  b = testing::tiny_llama_builder();
  b.tensor("blk.1.attn_norm.weight", {8});
  testing::write_bytes(path, b.build());
  EXPECT_FALSE(load_checkpoint(path));
  // A HF folder whose shard lacks a tensor / holds one of the wrong shape.
  std::filesystem::copy(fixture("tiny_qwen2_hf"), tmp / "q");
  auto st = SafetensorsFile::open(tmp / "q" / "model.safetensors");
  ASSERT_TRUE(st);
  std::vector<TensorView> views;
  for (const auto& v : st->tensors()) {
    if (v.name != "model.layers.0.mlp.down_proj.weight") views.push_back(v);
  }
  ASSERT_TRUE(write_safetensors(tmp / "q" / "model.safetensors", views));
  auto short_one = load_checkpoint(tmp / "q");
  ASSERT_FALSE(short_one);
  EXPECT_NE(short_one.error().message.find("'model.layers.0.mlp.down_proj.weight' (GGUF: blk.0.ffn_down.weight) is missing"),
            std::string::npos)
      << short_one.error().message;
  std::vector<float> wrong(5, 1.0f);
  views.push_back({"model.layers.0.mlp.down_proj.weight", SafetensorsDtype::F32, {5},
                   {reinterpret_cast<const std::byte*>(wrong.data()), 20}});
  ASSERT_TRUE(write_safetensors(tmp / "q" / "model.safetensors", views));
  auto shaped = load_checkpoint(tmp / "q");
  ASSERT_FALSE(shaped);
  EXPECT_NE(shaped.error().message.find("has shape [5], the config implies [32, 64]"), std::string::npos)
      << shaped.error().message;
  EXPECT_NE(shaped.error().message.find("model.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::weights
