// expect: TIMEOUT
// Ladder: the kernel spins forever waiting on a volatile device flag that nothing ever sets.
#include <kernelrl/abi.h>
#include <cuda_runtime.h>

__device__ volatile int g_ready = 0;  // BUG: no one ever sets this

__global__ void wait_then_copy(const float* x, float* y, int64_t n) {
  while (g_ready == 0) {
  }
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params;
  if (n_inputs != 1 || n_outputs != 1) return 1;
  wait_then_copy<<<132, 256, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, kernelrl_numel(&inputs[0]));
  // Wait here too, so the hang happens inside the call whatever the evaluator does next.
  return cudaStreamSynchronize((cudaStream_t)stream) == cudaSuccess ? 0 : 1;
}
