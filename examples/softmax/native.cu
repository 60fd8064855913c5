// Native candidate for examples/softmax: one block per row, online max/sum with warp shuffles.
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

// Merge two (max, sum-of-exp relative to max) pairs of the online softmax.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  s = (m == -INFINITY ? 0.f : s * __expf(m - mn)) + (m2 == -INFINITY ? 0.f : s2 * __expf(m2 - mn));
  m = mn;
}

// Pass 1 reads the row once, keeping a running (max, sum) per thread; the pairs are merged inside
// each warp with shuffles and then across warps through shared memory. Pass 2 writes exp(x-max)/sum.
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;
  float m = -INFINITY, s = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    const float v = xr[c];
    if (v > m) { s = s * __expf(m - v) + 1.f; m = v; }
    else       { s += __expf(v - m); }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
    merge(m, s, m2, s2);
  }
  __shared__ float sm[kWarps], ss[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) { sm[warp] = m; ss[warp] = s; }
  __syncthreads();
  m = lane < kWarps ? sm[lane] : -INFINITY;
  s = lane < kWarps ? ss[lane] : 0.f;
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
    merge(m, s, m2, s2);
  }
  const float inv = 1.f / s;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = __expf(xr[c] - m) * inv;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1) return 1;
  const DLTensor& x = inputs[0];
  if (x.ndim != 2 || x.dtype.code != kDLFloat || x.dtype.bits != 32) return 2;
  const int64_t rows = x.shape[0], cols = x.shape[1];
  if (rows == 0 || cols == 0) return 0;
  if (rows > 0x7fffffff) return 3;
  softmax_rows<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)x.data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
