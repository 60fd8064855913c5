// The SwiGLU kernel (swiglu_kernel.hpp): grid-stride over output elements.
#include "model/swiglu_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "model/cuda_numbers.cuh"

namespace kernelrl::model::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads) swiglu(SwigluArgs a) {
  const std::int64_t n = a.rows * a.inner;
  const T* in = static_cast<const T*>(a.gate_up);
  T* out = static_cast<T*>(a.out);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t row = i / a.inner, col = i % a.inner;
    const float gate = to_float(in[row * 2 * a.inner + col]);
    const float up = to_float(in[row * 2 * a.inner + a.inner + col]);
    const T silu = from_float<T>(gate / (1.0f + expf(-gate)));
    out[i] = from_float<T>(to_float(silu) * up);
  }
}

}  // namespace

const char* launch_swiglu(const SwigluArgs& args, void* stream) {
  if (args.rows <= 0 || args.inner <= 0) return "swiglu: empty input";
  const auto s = static_cast<cudaStream_t>(stream);
  const std::int64_t n = args.rows * args.inner;
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65536));
  switch (args.dtype) {
    case DType::FLOAT32: swiglu<float><<<blocks, kThreads, 0, s>>>(args); break;
    case DType::FLOAT16: swiglu<__half><<<blocks, kThreads, 0, s>>>(args); break;
    case DType::BFLOAT16: swiglu<__nv_bfloat16><<<blocks, kThreads, 0, s>>>(args); break;
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace kernelrl::model::cuda
