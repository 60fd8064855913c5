// Attention of one new token per row over a key/value cache, as a split-key CUDA kernel pair
// ("flash decoding"): blocks of (row, key/value head, chunk of keys) each compute an unnormalised
// partial result for the query heads that share the key/value head, and a second kernel merges the
// chunks. It reads each cached key and value once, skips the slots past the last written one (read
// from the device, so a CUDA graph replays it at any position), and honours a per-row key mask.
// For 16-bit dtypes with head_dim 64 and at most 8 query heads per key/value head, a tensor-core
// variant computes both products with mma instructions (decode_attention_mma.cu).
// Raw pointers only: this header is shared by the .cu file (nvcc) and the libtorch wrapper.
#pragma once

#include <cstdint>

namespace kernelrl::model::cuda {

enum class DType { FLOAT32, FLOAT16, BFLOAT16 };

inline constexpr int kDecodeChunk = 128;      // keys per block
inline constexpr int kDecodeMaxGroup = 8;     // query heads per key/value head
inline constexpr bool decode_head_dim_supported(std::int64_t head_dim) { return head_dim == 64 || head_dim == 128; }

// Strides are in elements; every tensor's last (head_dim) dimension is contiguous.
struct DecodeAttentionArgs {
  const void* q = nullptr;  // [B, H, D]
  std::int64_t q_stride_b = 0, q_stride_h = 0;
  const void* k = nullptr;  // [B, H_kv, L, D]; v has the same strides
  const void* v = nullptr;
  std::int64_t kv_stride_b = 0, kv_stride_h = 0, kv_stride_t = 0;
  const bool* key_mask = nullptr;  // [B, L] (slot stride 1) or null: every key is real
  std::int64_t mask_stride_b = 0;
  const std::int64_t* last_key = nullptr;  // device scalar: slots after it are not read; null: all L
  std::int64_t n_keys = 0;                 // L
  void* out = nullptr;                     // [B, H, D] contiguous, the dtype of q
  float* partial_out = nullptr;            // [B, H, splits, D] scratch
  float* partial_max = nullptr;            // [B, H, splits] scratch (log2 domain)
  float* partial_sum = nullptr;            // [B, H, splits] scratch
  int batch = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;  // applied to q.k
  DType dtype = DType::FLOAT32;
};

inline bool decode_attention_uses_mma(std::int64_t head_dim, std::int64_t group, DType dtype) {
  return head_dim == 64 && group <= kDecodeMaxGroup && dtype != DType::FLOAT32;
}

// Blocks per (row, key/value head), the size of the scratch buffers' splits dimension.
inline std::int64_t decode_attention_splits(std::int64_t n_keys) { return (n_keys + kDecodeChunk - 1) / kDecodeChunk; }

// Queues both kernels on `stream` (a cudaStream_t). Returns null, or the CUDA error's text.
const char* launch_decode_attention(const DecodeAttentionArgs& args, void* stream);

}  // namespace kernelrl::model::cuda
