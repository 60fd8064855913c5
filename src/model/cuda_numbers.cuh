// Conversions between the model's float dtypes (float, half, bfloat16) and float32 in device code,
// shared by the model's CUDA kernels: to_float(x), and from_float<T>(x) rounding to nearest even.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace kernelrl::model::cuda {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__half x) { return __half2float(x); }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

}  // namespace kernelrl::model::cuda
