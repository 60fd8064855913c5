// A cached forward's rotary embedding and key/value cache write as one CUDA kernel: from the
// fused q/k/v projection of T tokens per row (T = 1 when decoding), rotates the query and key heads (with the rounding
// of apply_rope: x * cos rounded to the dtype, then + rotate_half(x) * sin rounded once), writes
// the rotated queries out and the rotated keys and the values into cache slots slot .. slot + T - 1.
// With T = 1 the slot may be read from the device, so a CUDA graph replays it at any position. Raw pointers only (see
// decode_attention_kernel.hpp).
#pragma once

#include <cstdint>

#include "model/decode_attention_kernel.hpp"

namespace kernelrl::model::cuda {

// Strides are in elements; the head_dim dimension is contiguous everywhere.
struct RopeStoreArgs {
  const void* qkv = nullptr;  // [B, T, (H + 2 H_kv) * D]: query heads, key heads, value heads
  std::int64_t qkv_stride_b = 0, qkv_stride_t = 0;
  const void* cos = nullptr;  // [B or 1, T, D]; batch stride 0 broadcasts one row
  const void* sin_signed = nullptr;
  std::int64_t rope_stride_b = 0, rope_stride_t = 0;
  void* q_out = nullptr;  // [B, T, H, D] contiguous
  void* k_cache = nullptr;  // [B, H_kv, L, D]; v_cache has the same strides
  void* v_cache = nullptr;
  std::int64_t cache_stride_b = 0, cache_stride_h = 0, cache_stride_t = 0;
  const std::int64_t* slot_on_device = nullptr;  // the first slot to write, when set (T = 1 only)
  std::int64_t slot = 0;                         // else this one
  int batch = 0, tokens = 1, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  DType dtype = DType::FLOAT32;
};

// Queues the kernel on `stream` (a cudaStream_t). Returns null, or the CUDA error's text.
const char* launch_rope_store(const RopeStoreArgs& args, void* stream);

}  // namespace kernelrl::model::cuda
