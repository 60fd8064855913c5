// Element types of task tensors: sizes, names, torch spellings and the DLPack (code, bits) pair,
// so the checker and the tensor exchange with torch agree on one small vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kernelrl::eval {

enum class DType { F32, F64, F16, BF16, I8, U8, I16, I32, I64, BOOL };

// DLPack's type descriptor without lanes (always 1 here). Codes follow dlpack.h: kDLInt 0,
// kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
struct DlpackType {
  std::uint8_t code;
  std::uint8_t bits;
};

// Bytes per element (bool is one byte, as in torch).
std::size_t element_size_bytes(DType d);

// Canonical name without the "torch." prefix: "float32", "bfloat16", "int64", "bool", ...
std::string_view to_string(DType d);

// Accepts "torch.float32", "float32" and torch's aliases ("torch.float", "half", "long", ...).
// Returns nullopt for anything else (complex, float8, quantized types are not supported).
std::optional<DType> parse_dtype(std::string_view s);

DlpackType to_dlpack(DType d);

// The DType for a DLPack (code, bits) pair with one lane; nullopt when unsupported.
std::optional<DType> from_dlpack(DlpackType t);

// True for F32, F64, F16, BF16.
bool is_floating(DType d);

// IEEE binary16 and bfloat16 by hand, so host code needs no CUDA headers. Decoding is exact;
// encoding rounds to nearest even, overflows to inf and keeps NaN a (quiet) NaN.
float f16_bits_to_float(std::uint16_t bits);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_f16_bits(float value);
std::uint16_t float_to_bf16_bits(float value);

}  // namespace kernelrl::eval
