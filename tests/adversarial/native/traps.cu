// expect: RUNTIME_ERROR
// Adversarial (native): computes the right output, then launches a kernel that executes a trap
// instruction (`__trap()`), which aborts the kernel and leaves the CUDA context broken (a sticky
// "unspecified launch failure"). The evaluation after the call fails; that must be the candidate's
// RUNTIME_ERROR with a result record, never "could not evaluate".
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

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

__global__ void traps() { __trap(); }

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


extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  softmax_block_per_row<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), cols);
  traps<<<1, 1, 0, (cudaStream_t)stream>>>();
  return 0;
}
