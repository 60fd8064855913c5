// The sampling kernel (sample_kernel.hpp). Each thread keeps running (max, sum of exp) pairs for
// both temperatures and its best Gumbel score; the block merges them (ties go to the lower index,
// as argmax does). The hardware exp/log approximations (relative error ~1e-6) keep it memory-bound.
#include "model/sample_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <cmath>

#include "model/cuda_numbers.cuh"

namespace kernelrl::model::cuda {
namespace {

constexpr int kWarps = kSampleThreads / 32;

// Running log-sum-exp: m the maximum, s the sum of exp(x - m).
struct Lse {
  float m = -INFINITY, s = 0.0f;
  __device__ void add(float x) {
    if (x > m) {
      s = s * __expf(m - x) + 1.0f;  // m = -inf: s is 0, exp(-inf) is 0
      m = x;
    } else if (x != -INFINITY) {
      s += __expf(x - m);
    }
  }
  __device__ void merge(Lse o) {
    if (o.m == -INFINITY) return;
    if (m == -INFINITY) {
      *this = o;
      return;
    }
    const float top = fmaxf(m, o.m);
    s = s * expf(m - top) + o.s * expf(o.m - top);
    m = top;
  }
  __device__ float value() const { return m + logf(s); }
};

struct Best {
  float score = -INFINITY;
  std::int64_t index = -1;
  __device__ void offer(float x, std::int64_t i) {
    if (index < 0 || x > score || (x == score && i < index)) {
      score = x;
      index = i;
    }
  }
};

__device__ inline Lse shfl(Lse v, int o) {
  Lse r;
  r.m = __shfl_xor_sync(0xffffffffu, v.m, o);
  r.s = __shfl_xor_sync(0xffffffffu, v.s, o);
  return r;
}
__device__ inline Best shfl(Best v, int o) {
  Best r;
  r.score = __shfl_xor_sync(0xffffffffu, v.score, o);
  r.index = __shfl_xor_sync(0xffffffffu, v.index, o);
  return r;
}

template <typename T>
__global__ void __launch_bounds__(kSampleThreads) sample(SampleArgs a) {
  const int row = blockIdx.x;
  const T* logits = static_cast<const T*>(a.logits) + row * a.logits_stride_b;
  const bool greedy = a.temperature == 0.0f;
  const float inverse_temperature = greedy ? 0.0f : 1.0f / a.temperature;
  curandStatePhilox4_32_10_t rng;
  if (!greedy) curand_init(a.seed, static_cast<std::uint64_t>(row) * kSampleThreads + threadIdx.x, a.offset, &rng);
  Lse plain, tempered;
  Best best;
  for (std::int64_t i = threadIdx.x; i < a.vocab; i += kSampleThreads) {
    const float x = to_float(logits[i]);
    plain.add(x);
    if (greedy) {
      best.offer(x, i);
    } else {
      const float z = x * inverse_temperature;
      tempered.add(z);
      const float exponential = fmaxf(-__logf(curand_uniform(&rng)), 1e-30f);
      best.offer(z - __logf(exponential), i);
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    plain.merge(shfl(plain, o));
    tempered.merge(shfl(tempered, o));
    const Best other = shfl(best, o);
    if (other.index >= 0) best.offer(other.score, other.index);
  }
  __shared__ Lse plain_s[kWarps], tempered_s[kWarps];
  __shared__ Best best_s[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    plain_s[warp] = plain;
    tempered_s[warp] = tempered;
    best_s[warp] = best;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kWarps; ++w) {
    plain.merge(plain_s[w]);
    tempered.merge(tempered_s[w]);
    if (best_s[w].index >= 0) best.offer(best_s[w].score, best_s[w].index);
  }
  const float x = to_float(logits[best.index]);
  a.token[row * a.token_stride] = best.index;
  a.logprob[row * a.logprob_stride] = x - plain.value();
  a.sampling_logprob[row * a.sampling_logprob_stride] = greedy ? 0.0f : x * inverse_temperature - tempered.value();
}

}  // namespace

const char* launch_sample(const SampleArgs& args, void* stream) {
  if (args.batch <= 0 || args.vocab <= 0) return "sample: empty batch or vocabulary";
  const auto s = static_cast<cudaStream_t>(stream);
  switch (args.dtype) {
    case DType::FLOAT32: sample<float><<<args.batch, kSampleThreads, 0, s>>>(args); break;
    case DType::FLOAT16: sample<__half><<<args.batch, kSampleThreads, 0, s>>>(args); break;
    case DType::BFLOAT16: sample<__nv_bfloat16><<<args.batch, kSampleThreads, 0, s>>>(args); break;
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace kernelrl::model::cuda
