// Block decoders. Block layouts (ggml-common.h): Q8_0 = fp16 d, 32 x int8 q; value = q * d.
// Q4_0 = fp16 d, 16 bytes; byte j holds element j in its low nibble and element j + 16 in its high
// nibble; value = (q - 8) * d. Q4_1 = fp16 d, fp16 m, 16 bytes as Q4_0; value = q * d + m, with the
// product rounded to float32 before the add (as numpy does; the build does not contract to FMA).
#include "weights/dequantize.hpp"

#include <cstring>

namespace kernelrl::weights {

namespace {

std::uint16_t load_u16(const std::byte* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

void decode_f32(const std::byte* in, std::size_t n, float* out) { std::memcpy(out, in, n * sizeof(float)); }

void decode_f16(const std::byte* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = fp16_to_fp32(load_u16(in + 2 * i));
}

void decode_bf16(const std::byte* in, std::size_t n, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_fp32(load_u16(in + 2 * i));
}

constexpr std::size_t qk = 32;  // values per Q8_0 / Q4_0 / Q4_1 block

void decode_q8_0(const std::byte* in, std::size_t n_blocks, float* out) {
  for (std::size_t b = 0; b < n_blocks; ++b, in += 2 + qk, out += qk) {
    float d = fp16_to_fp32(load_u16(in));
    const auto* q = reinterpret_cast<const std::int8_t*>(in + 2);
    for (std::size_t j = 0; j < qk; ++j) out[j] = static_cast<float>(q[j]) * d;
  }
}

void decode_q4_0(const std::byte* in, std::size_t n_blocks, float* out) {
  for (std::size_t b = 0; b < n_blocks; ++b, in += 2 + qk / 2, out += qk) {
    float d = fp16_to_fp32(load_u16(in));
    const auto* q = reinterpret_cast<const std::uint8_t*>(in + 2);
    for (std::size_t j = 0; j < qk / 2; ++j) {
      out[j] = static_cast<float>((q[j] & 0x0F) - 8) * d;
      out[j + qk / 2] = static_cast<float>((q[j] >> 4) - 8) * d;
    }
  }
}

void decode_q4_1(const std::byte* in, std::size_t n_blocks, float* out) {
  for (std::size_t b = 0; b < n_blocks; ++b, in += 4 + qk / 2, out += qk) {
    float d = fp16_to_fp32(load_u16(in));
    float m = fp16_to_fp32(load_u16(in + 2));
    const auto* q = reinterpret_cast<const std::uint8_t*>(in + 4);
    for (std::size_t j = 0; j < qk / 2; ++j) {
      float lo = static_cast<float>(q[j] & 0x0F) * d;
      float hi = static_cast<float>(q[j] >> 4) * d;
      out[j] = lo + m;
      out[j + qk / 2] = hi + m;
    }
  }
}

}  // namespace

float fp16_to_fp32(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal half: normalise into a float32 normal.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3FFu;
    bits = sign | (static_cast<std::uint32_t>(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_fp32(std::uint16_t h) {
  std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

bool can_dequantize(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
      return true;
    default:
      return false;
  }
}

common::Fallible dequantize(GgmlType type, std::span<const std::byte> data, std::span<float> out) {
  auto layout = ggml_block_layout(type);
  if (!can_dequantize(type) || !layout) {
    return common::make_error("cannot dequantise ggml type " + ggml_type_name(type) +
                              " (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1)");
  }
  auto type_size = static_cast<std::size_t>(layout->type_size);
  auto block_size = static_cast<std::size_t>(layout->block_size);
  if (data.size() % type_size != 0 || data.size() / type_size * block_size != out.size()) {
    return common::make_error(std::to_string(data.size()) + " bytes of " + ggml_type_name(type) + " do not hold " +
                              std::to_string(out.size()) + " values");
  }
  std::size_t n_blocks = data.size() / type_size;
  switch (type) {
    case GgmlType::F32: decode_f32(data.data(), out.size(), out.data()); break;
    case GgmlType::F16: decode_f16(data.data(), out.size(), out.data()); break;
    case GgmlType::BF16: decode_bf16(data.data(), out.size(), out.data()); break;
    case GgmlType::Q8_0: decode_q8_0(data.data(), n_blocks, out.data()); break;
    case GgmlType::Q4_0: decode_q4_0(data.data(), n_blocks, out.data()); break;
    default: decode_q4_1(data.data(), n_blocks, out.data()); break;
  }
  return common::Ok{};
}

common::Expected<std::vector<float>> dequantize_tensor(const GgufFile& file, const GgufTensorInfo& info) {
  std::vector<float> out(static_cast<std::size_t>(info.n_elements));
  auto done = dequantize(info.type, file.tensor_data(info), out);
  if (!done) return common::make_error(file.path().string() + ": tensor '" + info.name + "': " + done.error().message);
  return out;
}

}  // namespace kernelrl::weights
