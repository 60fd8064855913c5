// safetensors: write -> read round trips (every dtype, scalar / empty / 1-4-D shapes), the layout
// the reference writes, files written by the reference (Python safetensors), sharded folders, and
// errors for truncated or corrupt files.
#include "weights/safetensors.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>

#include "test_support.hpp"
#include "weights/dequantize.hpp"

namespace kernelrl::weights {
namespace {

using testing::fixture;
using testing::put;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::byte(static_cast<unsigned char>((i * 131 + seed * 17) & 0xFF));
  return b;
}

TEST(WeightsSafetensors, RoundTripsEveryDtypeAndShape) {
  TempDir tmp;
  const std::vector<std::pair<SafetensorsDtype, std::vector<std::int64_t>>> cases = {
      {SafetensorsDtype::F32, {3, 5}},     {SafetensorsDtype::F16, {7}},         {SafetensorsDtype::BF16, {2, 3, 4}},
      {SafetensorsDtype::F64, {}},         {SafetensorsDtype::I64, {1, 1, 1, 3}}, {SafetensorsDtype::I32, {0, 4}},
      {SafetensorsDtype::I16, {5}},        {SafetensorsDtype::I8, {9}},          {SafetensorsDtype::U8, {2, 2}},
      {SafetensorsDtype::U16, {3}},        {SafetensorsDtype::U32, {1}},         {SafetensorsDtype::U64, {2}},
      {SafetensorsDtype::BOOL, {4}},
  };
  std::vector<std::vector<std::byte>> buffers;
  std::vector<TensorView> tensors;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto [dtype, shape] = cases[i];
    std::int64_t n = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
    buffers.push_back(pattern(static_cast<std::size_t>(n) * safetensors_dtype_size(dtype), static_cast<unsigned>(i)));
    if (dtype == SafetensorsDtype::BOOL) {
      for (auto& b : buffers.back()) b &= std::byte{1};
    }
    tensors.push_back({"t" + std::to_string(i) + "." + safetensors_dtype_name(dtype), dtype, shape, buffers.back()});
  }
  auto path = tmp / "all.safetensors";
  ASSERT_TRUE(write_safetensors(path, tensors, {{"format", "pt"}, {"note", "x"}}));
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->tensors().size(), tensors.size());
  for (const auto& want : tensors) {
    const TensorView* got = f->find(want.name);
    ASSERT_NE(got, nullptr) << want.name;
    EXPECT_EQ(got->dtype, want.dtype) << want.name;
    EXPECT_EQ(got->shape, want.shape) << want.name;
    ASSERT_EQ(got->data.size(), want.data.size()) << want.name;
    EXPECT_EQ(std::memcmp(got->data.data(), want.data.data(), want.data.size()), 0) << want.name;
  }
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->metadata().at("note"), "x");
  // No temporary file is left beside the result.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp.path()), std::filesystem::directory_iterator()), 1);
}

TEST(WeightsSafetensors, LayoutFollowsTheReference) {
  TempDir tmp;
  auto a = pattern(6, 1), b = pattern(16, 2), c = pattern(8, 3);
  std::vector<TensorView> tensors = {{"b_half", SafetensorsDtype::F16, {3}, a},
                                     {"z_float", SafetensorsDtype::F32, {4}, b},
                                     {"a_float", SafetensorsDtype::F32, {2}, c}};
  auto path = tmp / "layout.safetensors";
  ASSERT_TRUE(write_safetensors(path, tensors));
  std::string bytes = read_bytes(path);
  std::uint64_t n_header = testing::get<std::uint64_t>(bytes, 0);
  EXPECT_EQ(n_header % 8, 0u);
  std::string header = bytes.substr(8, n_header);
  auto j = nlohmann::json::parse(header);
  // Largest dtype first, then by name: a_float [0, 8), z_float [8, 24), b_half [24, 30).
  EXPECT_EQ(j["a_float"]["data_offsets"], nlohmann::json({0, 8}));
  EXPECT_EQ(j["z_float"]["data_offsets"], nlohmann::json({8, 24}));
  EXPECT_EQ(j["b_half"]["data_offsets"], nlohmann::json({24, 30}));
  EXPECT_EQ(j["b_half"]["dtype"], "F16");
  EXPECT_FALSE(j.contains("__metadata__"));
  EXPECT_EQ(bytes.size(), 8 + n_header + 30);
  // The header's keys are in name order.
  EXPECT_LT(header.find("a_float"), header.find("b_half"));
  EXPECT_LT(header.find("b_half"), header.find("z_float"));
}

TEST(WeightsSafetensors, WriterRejectsBadInput) {
  TempDir tmp;
  auto bytes = pattern(8, 0);
  auto path = tmp / "bad.safetensors";
  auto size = write_safetensors(path, {{"x", SafetensorsDtype::F32, {3}, bytes}});
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().message.find("tensor 'x'"), std::string::npos) << size.error().message;
  EXPECT_FALSE(write_safetensors(path, {{"x", SafetensorsDtype::F32, {2}, bytes}, {"x", SafetensorsDtype::F32, {2}, bytes}}));
  EXPECT_FALSE(write_safetensors(path, {{"__metadata__", SafetensorsDtype::F32, {2}, bytes}}));
  EXPECT_FALSE(std::filesystem::exists(path));
  auto nowhere = write_safetensors(tmp / "no" / "such" / "dir.safetensors", {});
  ASSERT_FALSE(nowhere);
  EXPECT_NE(nowhere.error().message.find("no/such/dir.safetensors"), std::string::npos);
}

TEST(WeightsSafetensors, ReadsFilesWrittenByTheReference) {
  auto f = SafetensorsFile::open(fixture("tiny_qwen2_hf/model.safetensors"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->metadata().at("format"), "pt");
  const TensorView* bias = f->find("model.layers.0.self_attn.q_proj.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, SafetensorsDtype::F16);
  EXPECT_EQ(bias->shape, (std::vector<std::int64_t>{32}));
  EXPECT_EQ(f->tensors().size(), 14u);
  EXPECT_TRUE(std::is_sorted(f->tensors().begin(), f->tensors().end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST(WeightsSafetensors, OpensShardedFoldersThroughTheIndex) {
  auto files = open_hf_safetensors(fixture("tiny_llama_hf"));
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  std::size_t n = 0;
  for (const auto& f : *files) n += f.tensors().size();
  EXPECT_EQ(n, 21u);
  auto single = open_hf_safetensors(fixture("tiny_qwen2_hf"));
  ASSERT_TRUE(single) << single.error().message;
  EXPECT_EQ(single->size(), 1u);

  TempDir tmp;
  auto empty = open_hf_safetensors(tmp.path());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("neither model.safetensors nor model.safetensors.index.json"), std::string::npos);
  // An index naming a shard that is not there, and one placing a tensor in the wrong shard.
  std::filesystem::copy(fixture("tiny_llama_hf"), tmp / "m");
  auto index_path = tmp / "m" / "model.safetensors.index.json";
  auto index = nlohmann::json::parse(read_bytes(index_path));
  index["weight_map"]["model.norm.weight"] = "model-00009-of-00009.safetensors";
  write_bytes(index_path, index.dump());
  auto missing = open_hf_safetensors(tmp / "m");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("model-00009-of-00009.safetensors"), std::string::npos);
  index["weight_map"]["model.norm.weight"] = "model-00001-of-00002.safetensors";
  index["weight_map"]["model.layers.1.mlp.up_proj.weight"] = "model-00001-of-00002.safetensors";
  write_bytes(index_path, index.dump());
  auto wrong = open_hf_safetensors(tmp / "m");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("does not hold it"), std::string::npos) << wrong.error().message;
  write_bytes(index_path, "{\"weight_map\": 3}");
  EXPECT_FALSE(open_hf_safetensors(tmp / "m"));
}

TEST(WeightsSafetensors, TruncatedAndCorruptFilesAreErrors) {
  TempDir tmp;
  const std::string good = read_bytes(fixture("tiny_qwen2_hf/model.safetensors"));
  auto path = tmp / "bad.safetensors";
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{100},
                          good.size() / 2, good.size() - 1}) {
    write_bytes(path, good.substr(0, cut));
    auto f = SafetensorsFile::open(path);
    ASSERT_FALSE(f) << "cut at " << cut;
    EXPECT_EQ(f.error().message.rfind(path.string() + ": ", 0), 0u) << f.error().message;
  }
  auto expect_error = [&](const std::string& bytes, const std::string& words) {
    write_bytes(path, bytes);
    auto f = SafetensorsFile::open(path);
    ASSERT_FALSE(f) << words;
    EXPECT_NE(f.error().message.find(words), std::string::npos) << f.error().message;
  };
  std::string b = good;
  put<std::uint64_t>(b, 0, 1ull << 50);
  expect_error(b, "over 100 MB");
  b = good;
  put<std::uint64_t>(b, 0, good.size());
  expect_error(b, "only");
  b = good;
  b[8] = '[';
  expect_error(b, "does not start with '{'");
  b = good;
  b[9] = '#';
  expect_error(b, "not a JSON object");

  auto with_header = [](const std::string& header, std::size_t n_data) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    std::memcpy(out.data(), &n, 8);
    return out + header + std::string(n_data, '\0');
  };
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "past the end of the data");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "do not hold 12 bytes");
  expect_error(with_header(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype \"Q4\"");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "not a non-negative integer");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "data_offsets");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8), "leaves a gap");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
               "overlaps");
  expect_error(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8), "cover 4 bytes");
  expect_error(with_header(R"({"__metadata__":{"k":1}})", 0), "__metadata__");
  auto ok = SafetensorsFile::open((write_bytes(path, with_header(R"({"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4)), path));
  EXPECT_TRUE(ok) << ok.error().message;
}

}  // namespace
}  // namespace kernelrl::weights
