// A candidate's library as the launch audit sees it: kernels of its own (one C++-mangled, one
// extern "C") and host functions that launch them in the ways a candidate can: <<<...>>>,
// cudaLaunchKernelEx, the driver's cuLaunchKernel, on the given stream or another. Built with nvcc
// by tests/audit/CMakeLists.txt, once with the shared CUDA runtime and once with the static one.
// Every function returns a cudaError_t (0: success) and synchronises nothing it was not asked to.
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void scale_kernel(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

extern "C" __global__ void add_one_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

namespace {
int blocks(int n) { return (n + 255) / 256; }
}  // namespace

extern "C" int audit_test_scale(float* x, int n, float a, cudaStream_t stream) {
  scale_kernel<<<blocks(n), 256, 0, stream>>>(x, a, n);
  return static_cast<int>(cudaGetLastError());
}

extern "C" int audit_test_add_one(float* x, int n, cudaStream_t stream) {
  add_one_kernel<<<blocks(n), 256, 0, stream>>>(x, n);
  return static_cast<int>(cudaGetLastError());
}

extern "C" int audit_test_launch_ex(float* x, int n, cudaStream_t stream) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks(n));
  config.blockDim = dim3(256);
  config.stream = stream;
  return static_cast<int>(cudaLaunchKernelEx(&config, scale_kernel, x, 2.0f, n));
}

// scale_kernel launched with 2,048 threads a block, over the device's limit: the driver refuses
// the launch and the kernel never runs (what a try/except fallback's trigger often is).
extern "C" int audit_test_oversized_launch(float* x, int n, cudaStream_t stream) {
  scale_kernel<<<1, 2048, 0, stream>>>(x, 2.0f, n);
  return static_cast<int>(cudaGetLastError());
}

// The driver's own entry point, reached without linking libcuda (the function pointer comes from the
// runtime), launching the CUfunction the runtime holds for scale_kernel.
extern "C" int audit_test_driver_launch(float* x, int n, cudaStream_t stream) {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &found);
  if (e != cudaSuccess) return static_cast<int>(e);
  if (found != cudaDriverEntryPointSuccess || entry == nullptr) return static_cast<int>(cudaErrorSymbolNotFound);
  cudaFunction_t function = nullptr;
  if ((e = cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(scale_kernel))) != cudaSuccess) {
    return static_cast<int>(e);
  }
  float a = 2.0f;
  void* args[] = {&x, &a, &n};
  using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void**, void**);
  const CUresult r = reinterpret_cast<Launch>(entry)(reinterpret_cast<CUfunction>(function), blocks(n), 1, 1, 256, 1, 1,
                                                     0, reinterpret_cast<CUstream>(stream), args, nullptr);
  return r == CUDA_SUCCESS ? 0 : static_cast<int>(cudaErrorLaunchFailure);
}

// Launches add_one_kernel on a stream of its own, created here and destroyed after (not captured):
// work the given stream does not order.
extern "C" int audit_test_other_stream(float* x, int n) {
  cudaStream_t own = nullptr;
  cudaError_t e = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
  if (e != cudaSuccess) return static_cast<int>(e);
  add_one_kernel<<<blocks(n), 256, 0, own>>>(x, n);
  e = cudaGetLastError();
  const cudaError_t synced = cudaStreamSynchronize(own);
  const cudaError_t destroyed = cudaStreamDestroy(own);
  if (e == cudaSuccess) e = synced;
  if (e == cudaSuccess) e = destroyed;
  return static_cast<int>(e);
}
