// Dequantisation equals gguf-py's gguf.quants.dequantize bit for bit (F32, F16, BF16, Q8_0, Q4_0,
// Q4_1), half/bfloat16 conversion edge cases, and errors for other types and wrong sizes.
#include "weights/dequantize.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <set>

#include "test_support.hpp"
#include "weights/safetensors.hpp"

namespace kernelrl::weights {
namespace {

using testing::fixture;

std::vector<float> as_floats(const TensorView& v) {
  std::vector<float> out(v.data.size() / 4);
  std::memcpy(out.data(), v.data.data(), v.data.size());
  return out;
}

TEST(WeightsDequantize, HalfAndBfloat16Conversions) {
  EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(fp16_to_fp32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(fp16_to_fp32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(std::bit_cast<std::uint32_t>(fp16_to_fp32(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(fp16_to_fp32(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_fp32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7E00)));
  EXPECT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
  // Every finite half converts to the same float as the round trip through the exact rational.
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {
    int exponent = static_cast<int>(h >> 10), mantissa = static_cast<int>(h & 0x3FF);
    float expect = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                 : std::ldexp(static_cast<float>(1024 + mantissa), exponent - 25);
    ASSERT_EQ(fp16_to_fp32(static_cast<std::uint16_t>(h)), expect) << h;
  }
  EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_fp32(0xC0A0), -5.0f);
  EXPECT_EQ(bf16_to_fp32(0x7F80), INFINITY);
}

TEST(WeightsDequantize, EveryFixtureTensorEqualsTheReferenceBitwise) {
  auto file = GgufFile::open(fixture("tiny_llama.gguf"));
  ASSERT_TRUE(file) << file.error().message;
  auto reference = SafetensorsFile::open(fixture("tiny_llama_dequant.safetensors"));
  ASSERT_TRUE(reference) << reference.error().message;
  std::set<GgmlType> types_seen;
  for (const auto& info : file->tensors()) {
    const TensorView* want = reference->find(info.name);
    ASSERT_NE(want, nullptr) << info.name;
    EXPECT_EQ(want->shape, info.shape) << info.name;
    auto got = dequantize_tensor(*file, info);
    ASSERT_TRUE(got) << got.error().message;
    std::vector<float> expected = as_floats(*want);
    ASSERT_EQ(got->size(), expected.size()) << info.name;
    EXPECT_EQ(std::memcmp(got->data(), expected.data(), expected.size() * 4), 0)
        << info.name << " (" << ggml_type_name(info.type) << ") differs from gguf.quants.dequantize";
    types_seen.insert(info.type);
  }
  EXPECT_EQ(types_seen, (std::set<GgmlType>{GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0,
                                            GgmlType::Q4_0, GgmlType::Q4_1}));
}

TEST(WeightsDequantize, HandMadeBlocksFollowTheDocumentedLayout) {
  // Q4_0: d = 0.5 (0x3800); byte j = (hi << 4) | lo, element j = lo, element j + 16 = hi.
  std::vector<std::byte> q4_0(18);
  q4_0[0] = std::byte{0x00};
  q4_0[1] = std::byte{0x38};
  for (int j = 0; j < 16; ++j) q4_0[2 + j] = std::byte(static_cast<unsigned char>(((15 - j) << 4) | j));
  std::vector<float> out(32);
  ASSERT_TRUE(dequantize(GgmlType::Q4_0, q4_0, out));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(out[j + 16], (15 - j - 8) * 0.5f) << j;
  }
  // Q4_1: d = 2 (0x4000), m = -1 (0xBC00); value = q * d + m.
  std::vector<std::byte> q4_1(20);
  q4_1[1] = std::byte{0x40};
  q4_1[3] = std::byte{0xBC};
  for (int j = 0; j < 16; ++j) q4_1[4 + j] = std::byte(static_cast<unsigned char>((j << 4) | (15 - j)));
  ASSERT_TRUE(dequantize(GgmlType::Q4_1, q4_1, out));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], (15 - j) * 2.0f - 1.0f);
    EXPECT_EQ(out[j + 16], j * 2.0f - 1.0f);
  }
  // Q8_0: d = 0.25 (0x3400), q = j - 16.
  std::vector<std::byte> q8(34);
  q8[1] = std::byte{0x34};
  for (int j = 0; j < 32; ++j) q8[2 + j] = std::byte(static_cast<unsigned char>(static_cast<std::int8_t>(j - 16)));
  ASSERT_TRUE(dequantize(GgmlType::Q8_0, q8, out));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], (j - 16) * 0.25f);
}

TEST(WeightsDequantize, OtherTypesAndWrongSizesAreErrors) {
  std::vector<std::byte> block(144);
  std::vector<float> out(256);
  auto k = dequantize(GgmlType::Q4_K, block, out);
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().message.find("Q4_K"), std::string::npos) << k.error().message;
  auto unknown = dequantize(static_cast<GgmlType>(77), block, out);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("ggml type 77"), std::string::npos);
  std::vector<std::byte> q8(34);
  std::vector<float> wrong(31);
  auto size = dequantize(GgmlType::Q8_0, q8, wrong);
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().message.find("do not hold 31 values"), std::string::npos);
  EXPECT_FALSE(dequantize(GgmlType::Q8_0, std::span<const std::byte>(q8.data(), 33), std::span<float>(out.data(), 32)));
  EXPECT_TRUE(can_dequantize(GgmlType::BF16));
  EXPECT_FALSE(can_dequantize(GgmlType::Q6_K));
}

}  // namespace
}  // namespace kernelrl::weights
