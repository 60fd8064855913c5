// expect: OK
// Ladder: correct but slow row softmax, one thread per row (three passes over the row).
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_thread_per_row(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float* yr = y + r * cols;
  float m = -INFINITY;
  for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.f;
  for (int64_t c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int64_t c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / s;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const int threads = 128;
  softmax_thread_per_row<<<(unsigned)((rows + threads - 1) / threads), threads, 0,
                           (cudaStream_t)stream>>>((const float*)inputs[0].data,
                                                   (float*)outputs[0].data, rows, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
