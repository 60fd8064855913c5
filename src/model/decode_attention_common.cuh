// Device helpers shared by the decode attention kernels (decode_attention_kernel.cu, the general
// one and the merge; decode_attention_mma.cu, the tensor-core one).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "model/cuda_numbers.cuh"
#include "model/decode_attention_kernel.hpp"

namespace kernelrl::model::cuda {

constexpr int kThreads = kDecodeChunk;  // one thread per key of the chunk while scoring
constexpr int kWarps = kThreads / 32;


// Eight consecutive elements from a 16-byte aligned (32 for float) address.
__device__ inline void load8(const float* p, float out[8]) {
  const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
  out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w, out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
}
__device__ inline void load8(const __half* p, float out[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __half22float2(h[i]);
    out[2 * i] = f.x, out[2 * i + 1] = f.y;
  }
}
__device__ inline void load8(const __nv_bfloat16* p, float out[8]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x, out[2 * i + 1] = f.y;
  }
}

__device__ inline float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ inline float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

__device__ inline std::int64_t keys_to_read(const DecodeAttentionArgs& a) {
  if (a.last_key == nullptr) return a.n_keys;
  const std::int64_t last = *a.last_key;
  return last + 1 < a.n_keys ? (last < 0 ? 0 : last + 1) : a.n_keys;
}

// What a partial kernel's block (chunk, key/value head, row) works on.
struct PartialBlock {
  int chunk, kv_head, row;
  int group;             // query heads per key/value head
  int splits;            // chunks per (row, key/value head): the grid's x
  std::int64_t n_keys;   // keys to read (keys_to_read)
  std::int64_t first;    // the chunk's first key
  std::int64_t stat;     // statistics index of the group's first query head; head g: stat + g * splits
};

__device__ inline PartialBlock partial_block(const DecodeAttentionArgs& a) {
  PartialBlock b;
  b.chunk = blockIdx.x, b.kv_head = blockIdx.y, b.row = blockIdx.z;
  b.group = a.n_heads / a.n_kv_heads;
  b.splits = gridDim.x;
  b.n_keys = keys_to_read(a);
  b.first = static_cast<std::int64_t>(b.chunk) * kDecodeChunk;
  b.stat = (static_cast<std::int64_t>(b.row) * a.n_heads + b.kv_head * b.group) * b.splits + b.chunk;
  return b;
}

// A block whose chunk starts past the last key has nothing to attend: it writes empty statistics
// (the merge skips them) and says so.
__device__ inline bool empty_chunk(const DecodeAttentionArgs& a, const PartialBlock& b) {
  if (b.first < b.n_keys) return false;
  if (threadIdx.x < b.group) {
    a.partial_max[b.stat + threadIdx.x * b.splits] = -INFINITY;
    a.partial_sum[b.stat + threadIdx.x * b.splits] = 0.0f;
  }
  return true;
}

// After a __syncthreads: the block's partial output of query head g (g < group), the sum over the
// warps of per_warp[w][g][d], written to partial_out.
template <int D, int ROWS>
__device__ inline void write_partial_out(const DecodeAttentionArgs& a, const PartialBlock& b,
                                         const float (*per_warp)[ROWS][D]) {
  for (int i = threadIdx.x; i < b.group * D; i += kThreads) {
    const int g = i / D, d = i % D;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += per_warp[w][g][d];
    a.partial_out[(b.stat + g * b.splits) * D + d] = sum;
  }
}

// The tensor-core partial kernel (decode_attention_mma.cu) over `splits` chunks per (row, key/value
// head); the caller launches the merge.
cudaError_t launch_mma_partial(const DecodeAttentionArgs& a, int splits, cudaStream_t stream);

}  // namespace kernelrl::model::cuda
