// expect: REJECTED
// Adversarial (native): computes correctly, but first raises the device printf buffer to 256 MB and
// has every thread of a 2048 x 256 launch printf a 1000-character line (about 500 MB of output
// when the device is synchronised, which writes it to the child's stdout, its log file). Caught by
// the 64 MB limit on every file of the child (SIGXFSZ).
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>
#include <cstdio>

constexpr int kThreads = 256;

// Block-wide reduction: shuffle inside each warp, then the first warp reduces the warp results.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? scratch[lane] : (kMax ? -INFINITY : 0.f);
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = kMax ? fmaxf(v, o) : v + o;
  }
  __syncthreads();  // scratch is reused by the next reduction
  return v;
}

__global__ void softmax_block_per_row(const float* __restrict__ x, float* __restrict__ y,
                                      int64_t cols) {
  __shared__ float scratch[32];
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, xr[c]);
  m = block_reduce<true>(m, scratch);
  float s = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) s += expf(xr[c] - m);
  s = block_reduce<false>(s, scratch);
  const float inv = 1.f / s;
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) yr[c] = expf(xr[c] - m) * inv;
}


#define KERNELRL_TEN_X "xxxxxxxxxx"
#define KERNELRL_HUNDRED_X KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X \
  KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X KERNELRL_TEN_X
#define KERNELRL_THOUSAND_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X \
  KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X KERNELRL_HUNDRED_X

__global__ void flood() { printf("%d %d " KERNELRL_THOUSAND_X "\n", blockIdx.x, threadIdx.x); }

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  static bool raised = false;
  if (!raised) {
    raised = true;
    // Refused if a kernel using printf already ran in this context; the default 1 MB buffer still
    // holds about 30,000 lines (over 30 MB of text) per synchronisation, past 64 MB by the 2nd call.
    if (cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 256ull << 20) != cudaSuccess) (void)cudaGetLastError();
  }
  flood<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>();
  softmax_block_per_row<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
