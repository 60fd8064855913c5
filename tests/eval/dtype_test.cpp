// DType tables and the hand-written half conversions the checker relies on.
#include "eval/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kernelrl::eval {
namespace {

TEST(DType, NamesSizesAndParsingRoundTrip) {
  const DType all[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                       DType::U8,  DType::I16, DType::I32, DType::I64,  DType::BOOL};
  const std::size_t sizes[] = {4, 8, 2, 2, 1, 1, 2, 4, 8, 1};
  for (std::size_t k = 0; k < std::size(all); ++k) {
    EXPECT_EQ(element_size_bytes(all[k]), sizes[k]) << to_string(all[k]);
    EXPECT_EQ(parse_dtype(to_string(all[k])), all[k]);
    EXPECT_EQ(parse_dtype("torch." + std::string(to_string(all[k]))), all[k]);
    EXPECT_EQ(from_dlpack(to_dlpack(all[k])), all[k]);
  }
}

TEST(DType, ParsesTorchSpellings) {
  EXPECT_EQ(parse_dtype("torch.float32"), DType::F32);
  EXPECT_EQ(parse_dtype("torch.bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("torch.int64"), DType::I64);
  EXPECT_EQ(parse_dtype("torch.bool"), DType::BOOL);
  EXPECT_EQ(parse_dtype("torch.float"), DType::F32);
  EXPECT_EQ(parse_dtype("torch.half"), DType::F16);
  EXPECT_EQ(parse_dtype("torch.long"), DType::I64);
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_EQ(parse_dtype("torch.complex64"), std::nullopt);
  EXPECT_EQ(parse_dtype("torch.float8_e4m3fn"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
}

TEST(DType, DlpackCodes) {
  auto check = [](DType d, int code, int bits) {
    const DlpackType t = to_dlpack(d);
    EXPECT_EQ(t.code, code) << to_string(d);
    EXPECT_EQ(t.bits, bits) << to_string(d);
  };
  check(DType::F32, 2, 32);
  check(DType::F64, 2, 64);
  check(DType::F16, 2, 16);
  check(DType::BF16, 4, 16);
  check(DType::I8, 0, 8);
  check(DType::I64, 0, 64);
  check(DType::U8, 1, 8);
  check(DType::BOOL, 6, 8);
  EXPECT_EQ(from_dlpack({1, 16}), std::nullopt);  // uint16: not supported
}

TEST(DType, F16DecodesSpecialPatterns) {
  EXPECT_EQ(f16_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(f16_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(f16_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(f16_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_bits_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::signbit(f16_bits_to_float(0x8000)));
  EXPECT_EQ(f16_bits_to_float(0x7c00), INFINITY);
  EXPECT_EQ(f16_bits_to_float(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7c01)));
}

TEST(DType, F16EncodeRoundsToNearestEven) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {  // every half value survives a round trip
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = f16_bits_to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(f))));
    } else {
      ASSERT_EQ(float_to_f16_bits(f), h) << bits;
    }
  }
  EXPECT_EQ(float_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even (down)
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(float_to_f16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);  // overflows to inf
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie with zero -> zero
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.5f, -25)), 0x0001);
}

TEST(DType, Bf16RoundTripAndRounding) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = bf16_bits_to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f))));
    } else {
      ASSERT_EQ(float_to_bf16_bits(f), h) << bits;
    }
  }
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even
}

}  // namespace
}  // namespace kernelrl::eval
