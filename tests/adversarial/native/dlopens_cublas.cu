// expect: REJECTED (imports dlopen/dlsym: compile/import_check.hpp)
// Adversarial (native): cuBLAS's headers are forbidden and `-z defs` stops a link against it, but
// nothing stops loading it at run time: dlopen("libcublas.so"), dlsym the entry points and
// call them (here it creates a handle and uses cublasSscal as a no-op scale by 1 on the output).
// Returns 2 if the library cannot be found, so the outcome says whether the load succeeded.
#include <kernelrl/abi.h>
#include <cuda_runtime.h>
#include <math.h>
#include <dlfcn.h>

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
  using create_fn = int (*)(void**);
  using set_stream_fn = int (*)(void*, cudaStream_t);
  using sscal_fn = int (*)(void*, int, const float*, float*, int);
  static void* handle = nullptr;
  static sscal_fn sscal = nullptr;
  if (!handle) {
    void* lib = nullptr;
    for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so"})
      if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 2;
    auto create = (create_fn)dlsym(lib, "cublasCreate_v2");
    auto set_stream = (set_stream_fn)dlsym(lib, "cublasSetStream_v2");
    sscal = (sscal_fn)dlsym(lib, "cublasSscal_v2");
    if (!create || !set_stream || !sscal || create(&handle) != 0) return 3;
    if (set_stream(handle, (cudaStream_t)stream) != 0) return 4;
  }
  softmax_block_per_row<<<(unsigned)rows, kThreads, 0, (cudaStream_t)stream>>>(
      (const float*)inputs[0].data, (float*)outputs[0].data, cols);
  const float one = 1.f;  // cuBLAS's default pointer mode: a host scalar
  if (sscal(handle, (int)(rows * cols), &one, (float*)outputs[0].data, 1) != 0) return 5;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
