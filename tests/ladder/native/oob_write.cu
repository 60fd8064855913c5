// expect: RUNTIME_ERROR
// Ladder: adds 1<<36 to every store index, writing ~256 GiB past the output (illegal address fault).
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr int64_t kWildOffset = 1LL << 36;  // BUG: far beyond any allocation on the device

__global__ void softmax_wild(const float* __restrict__ x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float m = -INFINITY, s = 0.f;
  for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
  for (int64_t c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int64_t c = 0; c < cols; ++c) y[r * cols + c + kWildOffset] = expf(xr[c] - m) / s;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  softmax_wild<<<(unsigned)((rows + 127) / 128), 128, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, rows, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;  // the fault surfaces at the next sync
}
