// GgufFile against fixtures written by llama.cpp's gguf-py: header, every metadata value type,
// tensor infos and data offsets, alignment; and the errors for truncated, corrupt and foreign files.
#include "weights/gguf.hpp"

#include <gtest/gtest.h>

#include <random>

#include "test_support.hpp"

namespace kernelrl::weights {
namespace {

using testing::fixture;
using testing::get;
using testing::put;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

GgufFile open_ok(const std::filesystem::path& p) {
  auto f = GgufFile::open(p);
  if (!f) ADD_FAILURE() << f.error().message;
  return std::move(*f);
}

// The file offset of tensor `name`'s info record (its name's length field).
std::size_t tensor_info_at(const std::string& bytes, const std::string& name) {
  std::string needle = std::string(1, static_cast<char>(name.size())) + std::string(7, '\0') + name;
  auto at = bytes.find(needle);
  EXPECT_NE(at, std::string::npos) << name;
  return at;
}

TEST(WeightsGguf, ReadsHeaderAndTensorInfos) {
  GgufFile f = open_ok(fixture("tiny_llama.gguf"));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  EXPECT_EQ(f.tensors().size(), 21u);
  const GgufTensorInfo* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, GgmlType::Q8_0);
  EXPECT_EQ(embd->ne, (std::vector<std::int64_t>{32, 64}));     // innermost first
  EXPECT_EQ(embd->shape, (std::vector<std::int64_t>{64, 32}));  // row-major
  EXPECT_EQ(embd->n_elements, 64 * 32);
  EXPECT_EQ(embd->n_bytes, 64u * 34u);  // one 34-byte Q8_0 block per row of 32
  EXPECT_EQ(f.tensor_data(*embd).size(), embd->n_bytes);
  const GgufTensorInfo* q41 = f.find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(q41, nullptr);
  EXPECT_EQ(q41->type, GgmlType::Q4_1);
  EXPECT_EQ(q41->n_bytes, 64u * 20u);
  EXPECT_EQ(f.find_tensor("no.such.tensor"), nullptr);
  // Data offsets are aligned and the last tensor ends inside the file.
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
    EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size()) << t.name;
  }
}

TEST(WeightsGguf, ReadsEveryMetadataValueType) {
  GgufFile f = open_ok(fixture("tiny_llama.gguf"));
  EXPECT_EQ(*f.get_string("general.architecture"), "llama");
  EXPECT_EQ(*f.get_int("test.uint8"), 200);
  EXPECT_EQ(*f.get_int("test.int8"), -100);
  EXPECT_EQ(*f.get_int("test.uint16"), 60000);
  EXPECT_EQ(*f.get_int("test.int16"), -30000);
  EXPECT_EQ(*f.get_int("test.uint32"), 4000000000);
  EXPECT_EQ(*f.get_int("test.int32"), -2000000000);
  EXPECT_EQ(*f.get_int("test.int64"), -9000000000000000000);
  EXPECT_EQ(*f.get_float("test.float32"), 0.1);  // shortest decimal of 0.1f, widened
  EXPECT_EQ(*f.get_float("test.float64"), 0.1);
  EXPECT_EQ(*f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5);
  EXPECT_EQ(*f.get_float("llama.block_count"), 2.0);  // integers read as numbers too
  EXPECT_TRUE(*f.get_bool("test.bool"));
  EXPECT_EQ(*f.get_string("test.string"), "h\xc3\xa9llo w\xc3\xb6rld");
  EXPECT_EQ(*f.get_int_array("test.array_int32"), (std::vector<std::int64_t>{1, -2, 3}));
  EXPECT_EQ(*f.get_int_array("test.array_uint8"), (std::vector<std::int64_t>{7, 8}));
  EXPECT_EQ(*f.get_float_array("test.array_float32"), (std::vector<double>{0.5, -1.25}));
  EXPECT_EQ(*f.get_string_array("test.array_string"), (std::vector<std::string>{"x", "", "zz"}));
  const GgufValue* nested = f.find("test.array_nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->type, GgufValueType::ARRAY);
  EXPECT_EQ(nested->element_type, GgufValueType::ARRAY);
  EXPECT_EQ(nested->n_items, 2u);
  // Keys after the nested array still read: the parser stepped over it correctly.
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), 64u);
  EXPECT_EQ(f.keys().front(), "general.architecture");
}

TEST(WeightsGguf, UnsignedOverInt64IsAnError) {
  GgufFile f = open_ok(fixture("tiny_llama.gguf"));
  auto v = f.get_int("test.uint64");  // 18e18 > INT64_MAX
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("test.uint64"), std::string::npos);
}

TEST(WeightsGguf, AccessorErrorsNameTheKey) {
  GgufFile f = open_ok(fixture("tiny_llama.gguf"));
  auto missing = f.get_int("llama.no_such_key");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("'llama.no_such_key' is missing"), std::string::npos);
  EXPECT_NE(missing.error().message.find("tiny_llama.gguf"), std::string::npos);
  auto wrong = f.get_string("llama.block_count");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("'llama.block_count' is uint32, not a string"), std::string::npos);
  EXPECT_FALSE(f.get_int("general.architecture"));
  EXPECT_FALSE(f.get_bool("test.uint8"));
  auto not_strings = f.get_string_array("test.array_int32");
  ASSERT_FALSE(not_strings);
  EXPECT_NE(not_strings.error().message.find("an array of int32, not an array of strings"), std::string::npos);
  EXPECT_FALSE(f.get_int_array("test.array_string"));
  EXPECT_FALSE(f.get_float_array("test.string"));
}

TEST(WeightsGguf, HonoursCustomAlignment) {
  GgufFile f = open_ok(fixture("tiny_qwen2.gguf"));
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;
}

TEST(WeightsGguf, ReadsVersion2AndRejectsOthers) {
  TempDir tmp;
  std::string bytes = read_bytes(fixture("tiny_llama.gguf"));
  auto path = tmp / "v.gguf";
  put<std::uint32_t>(bytes, 4, 2);
  write_bytes(path, bytes);
  auto v2 = GgufFile::open(path);
  ASSERT_TRUE(v2) << v2.error().message;
  EXPECT_EQ(v2->version(), 2u);
  for (auto [version, words] : {std::pair<std::uint32_t, const char*>{1, "version 1 is not supported"},
                                {4, "version 4 is not supported"},
                                {0x03000000u, "big-endian"}}) {
    put<std::uint32_t>(bytes, 4, version);
    write_bytes(path, bytes);
    auto f = GgufFile::open(path);
    ASSERT_FALSE(f) << version;
    EXPECT_NE(f.error().message.find(words), std::string::npos) << f.error().message;
    EXPECT_NE(f.error().message.find(path.string()), std::string::npos);
  }
}

TEST(WeightsGguf, WrongMagicAndForeignFiles) {
  TempDir tmp;
  std::string bytes = read_bytes(fixture("tiny_llama.gguf"));
  bytes[3] = 'X';
  write_bytes(tmp / "magic.gguf", bytes);
  auto f = GgufFile::open(tmp / "magic.gguf");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("magic is 'GGUX'"), std::string::npos) << f.error().message;
  EXPECT_NE(f.error().message.find((tmp / "magic.gguf").string()), std::string::npos);

  auto st = GgufFile::open(fixture("tiny_qwen2_hf/model.safetensors"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("not a GGUF file"), std::string::npos);
  auto missing = GgufFile::open(tmp / "absent.gguf");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("absent.gguf"), std::string::npos);
  auto dir = GgufFile::open(tmp.path());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("not a regular file"), std::string::npos);
}

TEST(WeightsGguf, EveryTruncationIsAnErrorNamingTheFile) {
  TempDir tmp;
  const std::string bytes = read_bytes(fixture("tiny_llama.gguf"));
  GgufFile whole = open_ok(fixture("tiny_llama.gguf"));
  std::vector<std::size_t> cuts = {0, 1, 3, 4, 7, 8, 15, 16, 23, 24, 25, 100, 1000, 3000};
  cuts.push_back(static_cast<std::size_t>(whole.data_offset()) - 1);
  cuts.push_back(static_cast<std::size_t>(whole.data_offset()));
  cuts.push_back(static_cast<std::size_t>(whole.data_offset()) + 1000);
  cuts.push_back(bytes.size() - 1);
  for (std::size_t cut = 5; cut < bytes.size(); cut += 97) cuts.push_back(cut);
  auto path = tmp / "cut.gguf";
  for (std::size_t cut : cuts) {
    write_bytes(path, bytes.substr(0, cut));
    auto f = GgufFile::open(path);
    ASSERT_FALSE(f) << "cut at " << cut << " opened";
    EXPECT_EQ(f.error().message.rfind(path.string() + ": ", 0), 0u) << f.error().message;
  }
  write_bytes(path, bytes.substr(0, bytes.size() - 1));  // the last tensor runs past the end
  auto last = GgufFile::open(path);
  ASSERT_FALSE(last);
  EXPECT_NE(last.error().message.find("tensor 'blk.1.ffn_norm.weight'"), std::string::npos) << last.error().message;
  EXPECT_NE(last.error().message.find("runs past the end of the file"), std::string::npos);
}

TEST(WeightsGguf, CorruptCountsLengthsAndOffsets) {
  TempDir tmp;
  const std::string good = read_bytes(fixture("tiny_llama.gguf"));
  auto path = tmp / "bad.gguf";
  auto expect_error = [&](const std::string& bytes, const std::string& words) {
    write_bytes(path, bytes);
    auto f = GgufFile::open(path);
    ASSERT_FALSE(f) << words;
    EXPECT_NE(f.error().message.find(words), std::string::npos) << f.error().message;
    EXPECT_EQ(f.error().message.rfind(path.string(), 0), 0u);
  };
  std::string b = good;
  put<std::uint64_t>(b, 8, ~0ull);  // tensor count
  expect_error(b, "tensor count");
  b = good;
  put<std::uint64_t>(b, 16, 1ull << 40);  // metadata count
  expect_error(b, "metadata count");
  b = good;
  put<std::uint64_t>(b, 24, 1ull << 40);  // the first key's length
  expect_error(b, "metadata entry 0 (key)");
  b = good;
  put<std::uint32_t>(b, 24 + 8 + 20, 99);  // general.architecture's value type
  expect_error(b, "value type id 99");

  std::size_t at = tensor_info_at(good, "blk.1.ffn_norm.weight");
  std::size_t dims_at = at + 8 + 21;
  std::size_t type_at = dims_at + 4 + 8;  // one dimension
  b = good;
  put<std::uint64_t>(b, type_at + 4, 1ull << 40);  // data offset far past the end
  expect_error(b, "runs past the end of the file");
  b = good;
  put<std::uint64_t>(b, type_at + 4, get<std::uint64_t>(good, type_at + 4) + 4);  // misaligned
  expect_error(b, "not a multiple of the alignment 32");
  b = good;
  put<std::uint32_t>(b, type_at, 77);
  expect_error(b, "ggml type id 77");
  b = good;
  put<std::uint32_t>(b, dims_at, 9);
  expect_error(b, "9 dimensions");
  b = good;
  put<std::uint64_t>(b, dims_at + 4, 0);
  expect_error(b, "dimension 0 = 0");

  std::size_t embd = tensor_info_at(good, "token_embd.weight");
  b = good;
  put<std::uint64_t>(b, embd + 8 + 17 + 4, 31);  // Q8_0 row of 31: not whole blocks
  expect_error(b, "not a multiple of the block size 32");
}

TEST(WeightsGguf, RandomDamageNeverCrashes) {
  // Flipped bytes in the header region: every open either succeeds or names the file.
  TempDir tmp;
  const std::string good = read_bytes(fixture("tiny_llama.gguf"));
  GgufFile whole = open_ok(fixture("tiny_llama.gguf"));
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::size_t> where(4, static_cast<std::size_t>(whole.data_offset()) - 1);
  auto path = tmp / "fuzz.gguf";
  int n_errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string b = good;
    for (int k = 0; k < 3; ++k) b[where(rng)] = static_cast<char>(rng());
    write_bytes(path, b);
    auto f = GgufFile::open(path);
    if (!f) {
      ++n_errors;
      EXPECT_EQ(f.error().message.rfind(path.string(), 0), 0u) << f.error().message;
      continue;
    }
    for (const auto& t : f->tensors()) ASSERT_LE(f->data_offset() + t.offset + t.n_bytes, f->file_size());
    for (const auto& key : f->keys()) (void)f->get_string_array(key);
  }
  EXPECT_GT(n_errors, 0);
}

}  // namespace
}  // namespace kernelrl::weights
