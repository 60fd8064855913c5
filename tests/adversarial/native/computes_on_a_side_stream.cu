// expect: OK
// Native: launches its kernel on a non-blocking stream of its own and returns without waiting. Once
// a hack (the timer's end event on the legacy stream did not wait for a non-blocking stream); now
// its process synchronises its whole CUDA context before answering a call, and the child's clock
// stops only when the GPU has come back to the child's context (eval/timing.cpp), so the kernel is
// timed: streams of its own are allowed (a private capture stream is the common honest use).
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
  static cudaStream_t side = nullptr;
  static cudaEvent_t ready = nullptr;
  if (!side && cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) return 2;
  if (!ready && cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) != cudaSuccess) return 3;
  // Start after everything already queued on the given stream (the evaluator's poisoning of the
  // output, its cache flush, its start event), so the result is never overwritten; nothing makes
  // the given stream or the legacy stream wait for the side stream in turn.
  if (cudaEventRecord(ready, (cudaStream_t)stream) != cudaSuccess) return 4;
  if (cudaStreamWaitEvent(side, ready, 0) != cudaSuccess) return 5;
  softmax_block_per_row<<<(unsigned)rows, kThreads, 0, side>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
