// DType tables: one switch per property so adding a type is a compile error until every table
// knows it.
#include "eval/dtype.hpp"

#include <bit>
#include <cmath>
#include <utility>

namespace kernelrl::eval {

namespace {

constexpr std::uint8_t dl_int = 0;
constexpr std::uint8_t dl_uint = 1;
constexpr std::uint8_t dl_float = 2;
constexpr std::uint8_t dl_bfloat = 4;
constexpr std::uint8_t dl_bool = 6;

constexpr DType all_dtypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                                DType::U8,  DType::I16, DType::I32, DType::I64,  DType::BOOL};

// torch's alternative spellings (torch.float is float32, torch.long is int64, ...).
constexpr std::pair<std::string_view, DType> aliases[] = {
    {"float", DType::F32}, {"double", DType::F64}, {"half", DType::F16},
    {"short", DType::I16}, {"int", DType::I32},    {"long", DType::I64},
};

}  // namespace

std::size_t element_size_bytes(DType d) {
  switch (d) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16: return 2;
    case DType::I8:
    case DType::U8:
    case DType::BOOL: return 1;
  }
  return 0;
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::I8: return "int8";
    case DType::U8: return "uint8";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::BOOL: return "bool";
  }
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view s) {
  constexpr std::string_view torch_prefix = "torch.";
  if (s.starts_with(torch_prefix)) s.remove_prefix(torch_prefix.size());
  for (DType d : all_dtypes) {
    if (to_string(d) == s) return d;
  }
  for (const auto& [name, d] : aliases) {
    if (name == s) return d;
  }
  return std::nullopt;
}

DlpackType to_dlpack(DType d) {
  auto bits = static_cast<std::uint8_t>(8 * element_size_bytes(d));
  switch (d) {
    case DType::F32:
    case DType::F64:
    case DType::F16: return {dl_float, bits};
    case DType::BF16: return {dl_bfloat, bits};
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64: return {dl_int, bits};
    case DType::U8: return {dl_uint, bits};
    case DType::BOOL: return {dl_bool, bits};
  }
  return {0, 0};
}

std::optional<DType> from_dlpack(DlpackType t) {
  for (DType d : all_dtypes) {
    DlpackType u = to_dlpack(d);
    if (u.code == t.code && u.bits == t.bits) return d;
  }
  return std::nullopt;
}

bool is_floating(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}

float f16_bits_to_float(std::uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_f16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000;
  const std::uint32_t abs_bits = x & 0x7fffffff;
  if (abs_bits > 0x7f800000) return static_cast<std::uint16_t>(sign | 0x7e00);  // NaN
  if (abs_bits >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // >= 65520: inf
  if (abs_bits >= 0x38800000) {  // normal in half: >= 2^-14
    const std::uint32_t exponent = (abs_bits >> 23) - 127 + 15;
    const std::uint32_t mantissa = abs_bits & 0x7fffff;
    std::uint32_t h = (exponent << 10) | (mantissa >> 13);
    const std::uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right
    return static_cast<std::uint16_t>(sign | h);
  }
  if (abs_bits <= 0x33000000) return static_cast<std::uint16_t>(sign);  // <= 2^-25 rounds to 0
  // Subnormal in half: the value in units of 2^-24, rounded to nearest even.
  const std::uint32_t mantissa = (abs_bits & 0x7fffff) | 0x800000;
  const int exponent = static_cast<int>(abs_bits >> 23) - 127;  // -25 .. -15
  const int shift = -exponent - 1;                                 // 14 .. 24
  std::uint32_t h = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((x >> 16) | 0x0040);  // NaN
  const std::uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

}  // namespace kernelrl::eval
