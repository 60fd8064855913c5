// The decode attention kernels (decode_attention_kernel.hpp). Scores are kept in the log2 domain
// (q is pre-scaled by scale * log2(e)) so the softmax uses exp2. Accumulation is in float32.
#include "model/decode_attention_kernel.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "model/decode_attention_common.cuh"

namespace kernelrl::model::cuda {
namespace {

// Block (chunk, kv head, row): partial softmax statistics and unnormalised output of the chunk's
// keys for each query head of the group (G of them, at most MAX_G). The block's loads are all
// issued before the first is used (the chunk's values, 16 bytes per thread per pass; each thread's
// key row where it is at most 128 bytes; the mask; the queries), so a block waits for memory once.
template <typename T, int D, int MAX_G>
__global__ void __launch_bounds__(kThreads) decode_partial(DecodeAttentionArgs a) {
  constexpr int kSlots = D / 8;                // 16-byte slots of a row
  constexpr int kKeysPerPass = kThreads / kSlots;
  constexpr int kPasses = kDecodeChunk / kKeysPerPass;
  const PartialBlock blk = partial_block(a);
  if (empty_chunk(a, blk)) return;
  const int kv_head = blk.kv_head, row = blk.row, group = blk.group, splits = blk.splits;
  const std::int64_t n_keys = blk.n_keys, first = blk.first, stat = blk.stat;
  const int count = static_cast<int>(n_keys - first < kDecodeChunk ? n_keys - first : kDecodeChunk);
  const std::int64_t kv_offset = row * a.kv_stride_b + kv_head * a.kv_stride_h + first * a.kv_stride_t;

  // Values: thread (slot, key lane) holds dims 8*slot..8*slot+7 of keys lane, lane + kKeysPerPass, ...
  const int slot = threadIdx.x % kSlots, lane_key = threadIdx.x / kSlots;
  using Raw = typename std::conditional<sizeof(T) == 4, float4, uint4>::type;  // 16 bytes
  constexpr int kRawPerSlot = sizeof(T) == 4 ? 2 : 1;                            // float: 8 elements = 32 bytes
  Raw values[kPasses][kRawPerSlot];
  {
    const T* v = static_cast<const T*>(a.v) + kv_offset + 8 * slot;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const int key = p * kKeysPerPass + lane_key;
#pragma unroll
      for (int r = 0; r < kRawPerSlot; ++r) {
        values[p][r] = key < count ? reinterpret_cast<const Raw*>(v + key * a.kv_stride_t)[r] : Raw{};
      }
    }
  }

  // Thread j scores key first + j.
  const int j = threadIdx.x;
  const T* key = static_cast<const T*>(a.k) + kv_offset + j * a.kv_stride_t;
  constexpr bool kHoistKey = D * sizeof(T) <= 128;
  constexpr int kKeyRaw = kHoistKey ? D * sizeof(T) / 16 : 1;
  Raw key_raw[kKeyRaw];
  if constexpr (kHoistKey) {
#pragma unroll
    for (int r = 0; r < kKeyRaw; ++r) key_raw[r] = j < count ? reinterpret_cast<const Raw*>(key)[r] : Raw{};
  }
  bool real = j < count;
  if (real && a.key_mask != nullptr) real = a.key_mask[row * a.mask_stride_b + first + j];

  __shared__ float q_s[MAX_G][D];
  __shared__ float p_s[MAX_G][kDecodeChunk];
  __shared__ float acc_s[kWarps][MAX_G][D];
  const T* q = static_cast<const T*>(a.q) + row * a.q_stride_b + kv_head * group * a.q_stride_h;
  const float q_scale = a.scale * 1.4426950408889634f;  // log2(e)
  for (int i = threadIdx.x; i < group * D; i += kThreads) {
    q_s[i / D][i % D] = to_float(q[(i / D) * a.q_stride_h + i % D]) * q_scale;
  }
  __syncthreads();

  float score[MAX_G];
#pragma unroll
  for (int g = 0; g < MAX_G; ++g) score[g] = 0.0f;
  if (real) {
#pragma unroll
    for (int d0 = 0; d0 < D; d0 += 8) {
      float kf[8];
      if constexpr (kHoistKey) {
        load8(reinterpret_cast<const T*>(key_raw) + d0, kf);
      } else {
        load8(key + d0, kf);
      }
#pragma unroll
      for (int g = 0; g < MAX_G; ++g) {
        if (g < group) {
#pragma unroll
          for (int e = 0; e < 8; ++e) score[g] += q_s[g][d0 + e] * kf[e];
        }
      }
    }
  }
#pragma unroll
  for (int g = 0; g < MAX_G; ++g) {
    if (g < group) p_s[g][j] = real ? score[g] : -INFINITY;
  }
  __syncthreads();

  // Per query head: the chunk's maximum, probabilities relative to it, their sum.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int g = warp; g < group; g += kWarps) {
    float m = -INFINITY;
    for (int i = lane; i < kDecodeChunk; i += 32) m = fmaxf(m, p_s[g][i]);
    m = warp_max(m);
    float l = 0.0f;
    for (int i = lane; i < kDecodeChunk; i += 32) {
      const float p = m == -INFINITY ? 0.0f : exp2f(p_s[g][i] - m);
      p_s[g][i] = p;
      l += p;
    }
    l = warp_sum(l);
    if (lane == 0) {
      a.partial_max[stat + g * splits] = m;
      a.partial_sum[stat + g * splits] = l;
    }
  }
  __syncthreads();

  // Probability-weighted values, then the sum over the key lanes: within a warp by shuffles
  // (lanes slot, slot + kSlots, ... hold the same dims), across warps in shared memory.
  float acc[MAX_G][8];
#pragma unroll
  for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int key = p * kKeysPerPass + lane_key;
    float vf[8];
    load8(reinterpret_cast<const T*>(&values[p][0]), vf);
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
      const float prob = g < group && key < count ? p_s[g][key] : 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] += prob * vf[e];
    }
  }
#pragma unroll
  for (int offset = kSlots; offset < 32; offset *= 2) {
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], offset);
    }
  }
  if (lane < kSlots) {
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc_s[warp][g][8 * slot + e] = acc[g][e];
    }
  }
  __syncthreads();
  write_partial_out<D, MAX_G>(a, blk, acc_s);
}

// Block (query head, row), thread d: the chunks merged with their maxima, normalised.
template <typename T, int D>
__global__ void __launch_bounds__(D) decode_merge(DecodeAttentionArgs a, int splits) {
  const int head = blockIdx.x, row = blockIdx.y, d = threadIdx.x;
  const std::int64_t base = (static_cast<std::int64_t>(row) * a.n_heads + head) * splits;
  // Eight splits at a time, every load of a group issued before any is used (a loop that tests
  // each split's sum before loading the next would wait for memory once per split).
  constexpr int kBatch = 8;
  float m = -INFINITY;
  for (int s0 = 0; s0 < splits; s0 += kBatch) {
    float sum[kBatch], top[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      sum[k] = s0 + k < splits ? a.partial_sum[base + s0 + k] : 0.0f;
      top[k] = s0 + k < splits ? a.partial_max[base + s0 + k] : -INFINITY;
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (sum[k] > 0.0f) m = fmaxf(m, top[k]);
    }
  }
  float l = 0.0f, o = 0.0f;
  for (int s0 = 0; m != -INFINITY && s0 < splits; s0 += kBatch) {
    float sum[kBatch], top[kBatch], part[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const bool inside = s0 + k < splits;
      sum[k] = inside ? a.partial_sum[base + s0 + k] : 0.0f;
      top[k] = inside ? a.partial_max[base + s0 + k] : -INFINITY;
      part[k] = inside ? a.partial_out[(base + s0 + k) * D + d] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (!(sum[k] > 0.0f)) continue;  // empty split (its partial_out was never written)
      const float w = exp2f(top[k] - m);
      l += w * sum[k];
      o += w * part[k];
    }
  }
  // A row with no real key at all gets zeros (never the case while decoding: the new token is real).
  T* out = static_cast<T*>(a.out) + (static_cast<std::int64_t>(row) * a.n_heads + head) * D + d;
  *out = from_float<T>(l > 0.0f ? o / l : 0.0f);
}

template <typename T, int D, int MAX_G>
void launch_partial(const DecodeAttentionArgs& a, int splits, cudaStream_t stream) {
  decode_partial<T, D, MAX_G><<<dim3(splits, a.n_kv_heads, a.batch), kThreads, 0, stream>>>(a);
}

template <typename T, int D>
cudaError_t launch_typed(const DecodeAttentionArgs& a, cudaStream_t stream) {
  const int splits = static_cast<int>(decode_attention_splits(a.n_keys));
  const int group = a.n_heads / a.n_kv_heads;
  if (decode_attention_uses_mma(a.head_dim, group, a.dtype)) {
    if (auto e = launch_mma_partial(a, splits, stream); e != cudaSuccess) return e;
  } else if (group == 1) {
    launch_partial<T, D, 1>(a, splits, stream);
  } else if (group == 2) {
    launch_partial<T, D, 2>(a, splits, stream);
  } else if (group <= 4) {
    launch_partial<T, D, 4>(a, splits, stream);
  } else {
    launch_partial<T, D, kDecodeMaxGroup>(a, splits, stream);
  }
  if (auto e = cudaGetLastError(); e != cudaSuccess) return e;
  decode_merge<T, D><<<dim3(a.n_heads, a.batch), D, 0, stream>>>(a, splits);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_for_dim(const DecodeAttentionArgs& a, cudaStream_t stream) {
  return a.head_dim == 64 ? launch_typed<T, 64>(a, stream) : launch_typed<T, 128>(a, stream);
}

}  // namespace

const char* launch_decode_attention(const DecodeAttentionArgs& args, void* stream) {
  if (!decode_head_dim_supported(args.head_dim)) return "decode attention: head_dim must be 64 or 128";
  if (args.n_kv_heads <= 0 || args.n_heads % args.n_kv_heads != 0 ||
      args.n_heads / args.n_kv_heads > kDecodeMaxGroup) {
    return "decode attention: unsupported head grouping";
  }
  if (args.batch <= 0 || args.n_keys <= 0) return "decode attention: empty batch or no keys";
  const auto s = static_cast<cudaStream_t>(stream);
  cudaError_t e = cudaSuccess;
  switch (args.dtype) {
    case DType::FLOAT32: e = launch_for_dim<float>(args, s); break;
    case DType::FLOAT16: e = launch_for_dim<__half>(args, s); break;
    case DType::BFLOAT16: e = launch_for_dim<__nv_bfloat16>(args, s); break;
  }
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace kernelrl::model::cuda
