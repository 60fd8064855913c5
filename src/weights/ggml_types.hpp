// The ggml tensor element types a GGUF file may name (ids as in ggml.h), with the block layout of
// each: how many values one block holds and how many bytes it takes. Quantised types store values
// in blocks (Q4_1: 32 values in 20 bytes); plain types are blocks of one value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kernelrl::weights {

enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

struct GgmlBlockLayout {
  std::int64_t block_size = 1;  // values per block
  std::int64_t type_size = 4;   // bytes per block
};

// The block layout of `type`, or nothing for an id this reader does not know.
std::optional<GgmlBlockLayout> ggml_block_layout(GgmlType type);

// "Q4_1", "F32", ...; "ggml type 77" for an unknown id.
std::string ggml_type_name(GgmlType type);

}  // namespace kernelrl::weights
