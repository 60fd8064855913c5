// ggml tensor data to float32: F32, F16, BF16, Q8_0, Q4_0, Q4_1 (the types the default model and
// small llama.cpp quantisations use). Results equal gguf-py's gguf.quants.dequantize bit for bit:
// each value is one fp16 scale times a small integer (plus an fp16 offset for Q4_1), in float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/expected.hpp"
#include "weights/ggml_types.hpp"
#include "weights/gguf.hpp"

namespace kernelrl::weights {

// IEEE half / bfloat16 bits to float32, exact (subnormals, infinities and NaN included).
float fp16_to_fp32(std::uint16_t bits);
float bf16_to_fp32(std::uint16_t bits);

// True for the types dequantize() handles.
bool can_dequantize(GgmlType type);

// Decodes all of `data` (whole blocks of `type`) into `out`, which must hold exactly the values
// the blocks encode; an error names the type when it is not handled, or the size mismatch.
common::Fallible dequantize(GgmlType type, std::span<const std::byte> data, std::span<float> out);

// The tensor's values as float32, row-major (info.shape); errors name the file, tensor and type.
common::Expected<std::vector<float>> dequantize_tensor(const GgufFile& file, const GgufTensorInfo& info);

}  // namespace kernelrl::weights
