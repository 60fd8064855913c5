// The tensor-core decode attention partial kernel (16-bit dtypes, head_dim 64, at most 8 query
// heads per key/value head). The general kernel spends most of its time on per-element float
// arithmetic; here each warp scores its 32 keys with mma.m16n8k16 (the group's query heads are
// the rows of A, zero-padded to 16) and weighs the values with a second mma whose A operand is
// the probabilities straight from the first one's accumulators. Head dims are visited in a
// permuted order that lets every thread load 32 contiguous bytes per key row; values are
// transposed in registers with movmatrix. Scores and sums are float32; probabilities enter the
// second product rounded to the 16-bit dtype, as in FlashAttention.
#include <cuda_runtime.h>

#include "model/decode_attention_common.cuh"

namespace kernelrl::model::cuda {
namespace {

constexpr int kD = 64;
constexpr int kKeysPerWarp = kDecodeChunk / kWarps;  // 32: four tiles of 8 keys
constexpr int kTiles = kKeysPerWarp / 8;

template <typename T>
struct Mma;
template <>
struct Mma<__nv_bfloat16> {
  __device__ static void run(float d[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static unsigned pack(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
};
template <>
struct Mma<__half> {
  __device__ static void run(float d[4], const unsigned a[4], unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ static unsigned pack(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&v);
  }
};

// The 8x8 16-bit matrix held one register per thread (thread 4r + c: row r, columns 2c, 2c+1),
// transposed.
__device__ inline unsigned transpose8x8(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

// Lane 4r + c of a warp plays row (query head) r and key column r of each 8-key tile; for the
// head dims it owns 16c..16c+15, as eight 16-bit pairs (word i: dims 16c + 2i, 16c + 2i + 1).
// k-step s of the score product uses words 2s and 2s + 1: the mma's k index 2c + j stands for
// dim 16c + 4s + j and 2c + 8 + j for dim 16c + 4s + 2 + j, the same for queries and keys.
template <typename T>
__global__ void __launch_bounds__(kThreads) decode_partial_mma(DecodeAttentionArgs a) {
  const PartialBlock blk = partial_block(a);
  if (empty_chunk(a, blk)) return;
  const int kv_head = blk.kv_head, row = blk.row, group = blk.group, splits = blk.splits;
  const std::int64_t n_keys = blk.n_keys, first = blk.first, stat = blk.stat;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane / 4, c = lane % 4;
  const std::int64_t warp_first = first + warp * kKeysPerWarp;
  const std::int64_t kv_offset = row * a.kv_stride_b + kv_head * a.kv_stride_h;

  // Every load first: this thread's 32 bytes of key and value row 8t + r of each tile, the mask
  // of its score positions (keys 8t + 2c, 8t + 2c + 1), its query row.
  uint4 keys[kTiles][2], values[kTiles][2];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const std::int64_t key = warp_first + 8 * t + r;
    const bool inside = key < n_keys;
    const uint4* k = reinterpret_cast<const uint4*>(static_cast<const T*>(a.k) + kv_offset + key * a.kv_stride_t + 16 * c);
    const uint4* v = reinterpret_cast<const uint4*>(static_cast<const T*>(a.v) + kv_offset + key * a.kv_stride_t + 16 * c);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      keys[t][h] = inside ? k[h] : uint4{0, 0, 0, 0};
      values[t][h] = inside ? v[h] : uint4{0, 0, 0, 0};
    }
  }
  bool real[kTiles][2];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const std::int64_t key = warp_first + 8 * t + 2 * c + j;
      real[t][j] = key < n_keys && (a.key_mask == nullptr || a.key_mask[row * a.mask_stride_b + key]);
    }
  }
  unsigned q_words[8];
  {
    const T* q = static_cast<const T*>(a.q) + row * a.q_stride_b + (kv_head * group + r) * a.q_stride_h + 16 * c;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint4 w = r < group ? reinterpret_cast<const uint4*>(q)[h] : uint4{0, 0, 0, 0};
      q_words[4 * h] = w.x, q_words[4 * h + 1] = w.y, q_words[4 * h + 2] = w.z, q_words[4 * h + 3] = w.w;
    }
  }
  auto word = [](const uint4 (&pair)[2], int i) {
    const uint4& w = pair[i / 4];
    return (i % 4 == 0) ? w.x : (i % 4 == 1) ? w.y : (i % 4 == 2) ? w.z : w.w;
  };

  // Scores (log2 domain): tile t's accumulators hold head r, keys 8t + 2c + {0, 1}.
  const float scale = a.scale * 1.4426950408889634f;
  float score[kTiles][2];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const unsigned a_frag[4] = {q_words[2 * s], 0u, q_words[2 * s + 1], 0u};
      Mma<T>::run(acc, a_frag, word(keys[t], 2 * s), word(keys[t], 2 * s + 1));
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) score[t][j] = real[t][j] ? acc[j] * scale : -INFINITY;
  }

  // The block's maximum and sum per head: over the four lanes of a row, then over the warps.
  __shared__ float max_s[kWarps][kDecodeMaxGroup], sum_s[kWarps][kDecodeMaxGroup];
  __shared__ float out_s[kWarps][kDecodeMaxGroup][kD];
  float m = -INFINITY;
#pragma unroll
  for (int t = 0; t < kTiles; ++t) m = fmaxf(m, fmaxf(score[t][0], score[t][1]));
  m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
  m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
  if (c == 0) max_s[warp][r] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kWarps; ++w) m = fmaxf(m, max_s[w][r]);
  float p[kTiles][2], l = 0.0f;
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      p[t][j] = m == -INFINITY ? 0.0f : exp2f(score[t][j] - m);
      l += p[t][j];
    }
  }
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  if (c == 0) sum_s[warp][r] = l;

  // Weighed values: k-step s' covers tiles 2s', 2s' + 1; n-tile i is the dims of word i
  // (n = 2c' + j stands for dim 16c' + 2i + j), transposed into the B layout by movmatrix.
  float out[8][4];
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i][0] = out[i][1] = out[i][2] = out[i][3] = 0.0f;
#pragma unroll
  for (int s = 0; s < kTiles / 2; ++s) {
    const unsigned a_frag[4] = {Mma<T>::pack(p[2 * s][0], p[2 * s][1]), 0u, Mma<T>::pack(p[2 * s + 1][0], p[2 * s + 1][1]), 0u};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      Mma<T>::run(out[i], a_frag, transpose8x8(word(values[2 * s], i)), transpose8x8(word(values[2 * s + 1], i)));
    }
  }
  // out[i][0..1]: head r, dims 16c + 2i + {0, 1}.
  if (r < group) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      out_s[warp][r][16 * c + 2 * i] = out[i][0];
      out_s[warp][r][16 * c + 2 * i + 1] = out[i][1];
    }
  }
  __syncthreads();
  write_partial_out<kD, kDecodeMaxGroup>(a, blk, out_s);
  if (threadIdx.x < group) {
    float total = 0.0f, top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      total += sum_s[w][threadIdx.x];
      top = fmaxf(top, max_s[w][threadIdx.x]);
    }
    a.partial_max[stat + threadIdx.x * splits] = top;
    a.partial_sum[stat + threadIdx.x * splits] = total;
  }
}

}  // namespace

cudaError_t launch_mma_partial(const DecodeAttentionArgs& a, int splits, cudaStream_t stream) {
  if (!decode_attention_uses_mma(a.head_dim, a.n_heads / a.n_kv_heads, a.dtype)) return cudaErrorInvalidValue;
  const dim3 grid(splits, a.n_kv_heads, a.batch);
  if (a.dtype == DType::FLOAT16) {
    decode_partial_mma<__half><<<grid, kThreads, 0, stream>>>(a);
  } else {
    decode_partial_mma<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

}  // namespace kernelrl::model::cuda
