// The pipelined decode attention partial kernel (16-bit dtypes, head_dim 64). A block of the
// general kernel loads its one chunk and then computes, so with every block doing the same the
// whole grid alternates between waiting for memory and computing. Here a block walks up to
// kPipelineChunks chunks with an online softmax, copying chunk c + 1 into shared memory (cp.async)
// while it scores and weighs chunk c, so its loads stay in flight while it computes.
#include <cuda_runtime.h>

#include "model/decode_attention_common.cuh"

namespace kernelrl::model::cuda {
namespace {

constexpr int kD = 64;
constexpr int kPieces = kD * 2 / 16;  // 16-byte pieces per key or value row

__device__ inline void cp_async16(void* shared, const void* global, bool copy) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(copy ? 16 : 0));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// A block's dynamic shared memory: two chunks of keys and values (piece c of key row r is stored
// at c ^ (r % 8), so the eight rows a quarter-warp reads at once fall in different banks), the
// group's queries, one chunk's probabilities, the running softmax statistics per query head.
template <int MAX_G>
struct Shared {
  uint4 keys[2][kDecodeChunk][kPieces];
  uint4 values[2][kDecodeChunk][kPieces];
  float q[MAX_G][kD];
  float p[MAX_G][kDecodeChunk];
  float running_max[MAX_G], running_sum[MAX_G], rescale[MAX_G];
};

template <typename T, int MAX_G>
__global__ void __launch_bounds__(kThreads) decode_partial_pipelined(DecodeAttentionArgs a) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto& sh = *reinterpret_cast<Shared<MAX_G>*>(shared_bytes);
  const int split = blockIdx.x, kv_head = blockIdx.y, row = blockIdx.z;
  const int group = a.n_heads / a.n_kv_heads;
  const int splits = gridDim.x;
  const std::int64_t n_keys = keys_to_read(a);
  const std::int64_t first = static_cast<std::int64_t>(split) * kPipelineChunks * kDecodeChunk;
  const std::int64_t stat = (static_cast<std::int64_t>(row) * a.n_heads + kv_head * group) * splits + split;
  if (first >= n_keys) {  // past the last written slot: an empty split the merge skips
    if (threadIdx.x < group) {
      a.partial_max[stat + threadIdx.x * splits] = -INFINITY;
      a.partial_sum[stat + threadIdx.x * splits] = 0.0f;
    }
    return;
  }
  const int n_chunks = static_cast<int>(
      (n_keys - first + kDecodeChunk - 1) / kDecodeChunk < kPipelineChunks ? (n_keys - first + kDecodeChunk - 1) / kDecodeChunk
                                                                             : kPipelineChunks);
  const std::int64_t kv_offset = row * a.kv_stride_b + kv_head * a.kv_stride_h;
  const T* k_base = static_cast<const T*>(a.k) + kv_offset;
  const T* v_base = static_cast<const T*>(a.v) + kv_offset;

  // Chunk `chunk` into stage `stage`; rows past the last key are zero-filled.
  auto load = [&](int chunk, int stage) {
    const std::int64_t key0 = first + static_cast<std::int64_t>(chunk) * kDecodeChunk;
    for (int i = threadIdx.x; i < kDecodeChunk * kPieces; i += kThreads) {
      const int r = i / kPieces, c = i % kPieces;
      const bool inside = key0 + r < n_keys;
      const std::int64_t key = inside ? key0 + r : first;  // a valid address even when nothing is copied
      cp_async16(&sh.keys[stage][r][c ^ (r % 8)], k_base + key * a.kv_stride_t + c * 8, inside);
      cp_async16(&sh.values[stage][r][c], v_base + key * a.kv_stride_t + c * 8, inside);
    }
    cp_async_commit();
  };
  load(0, 0);

  const T* q = static_cast<const T*>(a.q) + row * a.q_stride_b + kv_head * group * a.q_stride_h;
  const float q_scale = a.scale * 1.4426950408889634f;  // log2(e)
  for (int i = threadIdx.x; i < group * kD; i += kThreads) {
    sh.q[i / kD][i % kD] = to_float(q[(i / kD) * a.q_stride_h + i % kD]) * q_scale;
  }
  if (threadIdx.x < MAX_G) {
    sh.running_max[threadIdx.x] = -INFINITY;
    sh.running_sum[threadIdx.x] = 0.0f;
  }

  // Weighing values: thread (slot, lane key) holds dims 8*slot..8*slot+7 of keys lane key,
  // lane key + kKeysPerPass, ... of each chunk.
  constexpr int kKeysPerPass = kThreads / kPieces, kPasses = kDecodeChunk / kKeysPerPass;
  const int slot = threadIdx.x % kPieces, lane_key = threadIdx.x / kPieces;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, j = threadIdx.x;
  float acc[MAX_G][8];
#pragma unroll
  for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
  }

  for (int chunk = 0; chunk < n_chunks; ++chunk) {
    const int stage = chunk & 1;
    if (chunk + 1 < n_chunks) {
      load(chunk + 1, stage ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const std::int64_t key0 = first + static_cast<std::int64_t>(chunk) * kDecodeChunk;
    const int count = static_cast<int>(n_keys - key0 < kDecodeChunk ? n_keys - key0 : kDecodeChunk);

    // Scores: thread j takes key key0 + j.
    bool real = j < count;
    if (real && a.key_mask != nullptr) real = a.key_mask[row * a.mask_stride_b + key0 + j];
    float score[MAX_G];
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) score[g] = 0.0f;
    if (real) {
#pragma unroll
      for (int c = 0; c < kPieces; ++c) {
        float kf[8];
        load8(reinterpret_cast<const T*>(&sh.keys[stage][j][c ^ (j % 8)]), kf);
#pragma unroll
        for (int g = 0; g < MAX_G; ++g) {
          if (g < group) {
#pragma unroll
            for (int e = 0; e < 8; ++e) score[g] += sh.q[g][8 * c + e] * kf[e];
          }
        }
      }
    }
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
      if (g < group) sh.p[g][j] = real ? score[g] : -INFINITY;
    }
    __syncthreads();

    // Online softmax per query head: the new running maximum, this chunk's probabilities relative
    // to it, the factor that rescales what was accumulated so far.
    for (int g = warp; g < group; g += kWarps) {
      float m = -INFINITY;
      for (int i = lane; i < kDecodeChunk; i += 32) m = fmaxf(m, sh.p[g][i]);
      m = warp_max(m);
      const float previous = sh.running_max[g];
      const float top = fmaxf(previous, m);
      float l = 0.0f;
      for (int i = lane; i < kDecodeChunk; i += 32) {
        const float p = top == -INFINITY ? 0.0f : exp2f(sh.p[g][i] - top);
        sh.p[g][i] = p;
        l += p;
      }
      l = warp_sum(l);
      __syncwarp();
      if (lane == 0) {
        const float rescale = top == -INFINITY ? 1.0f : exp2f(previous - top);
        sh.rescale[g] = rescale;
        sh.running_sum[g] = sh.running_sum[g] * rescale + l;
        sh.running_max[g] = top;
      }
    }
    __syncthreads();

#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
      const float rescale = g < group ? sh.rescale[g] : 1.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] *= rescale;
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int key = pass * kKeysPerPass + lane_key;
      float vf[8];
      load8(reinterpret_cast<const T*>(&sh.values[stage][key][slot]), vf);
#pragma unroll
      for (int g = 0; g < MAX_G; ++g) {
        const float prob = g < group ? sh.p[g][key] : 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += prob * vf[e];
      }
    }
    __syncthreads();  // the next iteration copies into the stage read here
  }

  // Sum over the lane keys: within a warp by shuffles, across warps in shared memory (the key
  // stages are free now).
#pragma unroll
  for (int offset = kPieces; offset < 32; offset *= 2) {
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], offset);
    }
  }
  auto* acc_s = reinterpret_cast<float (*)[MAX_G][kD]>(&sh.keys[0][0][0]);  // [kWarps][MAX_G][kD]
  static_assert(sizeof(float) * kWarps * MAX_G * kD <= sizeof(uint4) * kDecodeChunk * kPieces * 2,
                "the reduction buffer must fit in the key stages");
  if (lane < kPieces) {
#pragma unroll
    for (int g = 0; g < MAX_G; ++g) {
#pragma unroll
      for (int e = 0; e < 8; ++e) acc_s[warp][g][8 * slot + e] = acc[g][e];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * kD; i += kThreads) {
    const int g = i / kD, d = i % kD;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += acc_s[w][g][d];
    a.partial_out[(stat + g * splits) * kD + d] = sum;
  }
  if (threadIdx.x < group) {
    a.partial_max[stat + threadIdx.x * splits] = sh.running_max[threadIdx.x];
    a.partial_sum[stat + threadIdx.x * splits] = sh.running_sum[threadIdx.x];
  }
}

template <typename T, int MAX_G>
cudaError_t launch_typed(const DecodeAttentionArgs& a, int splits, cudaStream_t stream) {
  constexpr int bytes = sizeof(Shared<MAX_G>);
  // Over 48 KiB of dynamic shared memory needs the opt-in, set once per kernel (the first call is
  // an eager step, never inside a CUDA graph capture).
  static const cudaError_t configured = cudaFuncSetAttribute(
      decode_partial_pipelined<T, MAX_G>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (configured != cudaSuccess) return configured;
  decode_partial_pipelined<T, MAX_G><<<dim3(splits, a.n_kv_heads, a.batch), kThreads, bytes, stream>>>(a);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_for_group(const DecodeAttentionArgs& a, int splits, cudaStream_t stream) {
  const int group = a.n_heads / a.n_kv_heads;
  if (group == 1) return launch_typed<T, 1>(a, splits, stream);
  if (group == 2) return launch_typed<T, 2>(a, splits, stream);
  if (group <= 4) return launch_typed<T, 4>(a, splits, stream);
  return launch_typed<T, kDecodeMaxGroup>(a, splits, stream);
}

}  // namespace

cudaError_t launch_pipelined_partial(const DecodeAttentionArgs& a, int splits, cudaStream_t stream) {
  if (a.head_dim != kD || a.dtype == DType::FLOAT32) return cudaErrorInvalidValue;
  return a.dtype == DType::FLOAT16 ? launch_for_group<__half>(a, splits, stream)
                                   : launch_for_group<__nv_bfloat16>(a, splits, stream);
}

}  // namespace kernelrl::model::cuda
