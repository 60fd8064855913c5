// expect: WRONG_OUTPUT
// Ladder: shared-memory tree reductions over 1024 threads with every __syncthreads() missing (a race).
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr int kThreads = 1024;

// BUG: no barrier between the writes to red[] and the tree, between tree levels, or before every
// thread reads red[0]. Warps 1..31 skip the tree and read red[0] long before warp 0 has finished
// folding in their values, and the sum phase overwrites red[] while slow warps still read the max,
// so threads combine different maxima and partial sums: most rows come out wrong.
__global__ void softmax_racy(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  __shared__ float red[kThreads];
  const int t = threadIdx.x;
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;

  float m = -INFINITY;
  for (int64_t c = t; c < cols; c += kThreads) m = fmaxf(m, xr[c]);
  red[t] = m;
  for (int s = kThreads / 2; s > 0; s >>= 1)
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);  // partner may not have written yet
  m = red[0];

  float sum = 0.f;
  for (int64_t c = t; c < cols; c += kThreads) sum += expf(xr[c] - m);
  red[t] = sum;
  for (int s = kThreads / 2; s > 0; s >>= 1)
    if (t < s) red[t] += red[t + s];
  sum = red[0];

  for (int64_t c = t; c < cols; c += kThreads) yr[c] = expf(xr[c] - m) / sum;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  softmax_racy<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
