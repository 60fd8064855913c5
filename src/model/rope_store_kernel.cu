// The rotary embedding + cache write kernel (rope_store_kernel.hpp): block per token, thread per pair
// of elements (e, e + D/2) of a query or key head, or per two adjacent value elements.
#include "model/rope_store_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "model/cuda_numbers.cuh"

namespace kernelrl::model::cuda {
namespace {

constexpr int kThreads = 256;

// x * cos, rounded to T, plus partner * sin_signed, rounded once (apply_rope's x * cos then addcmul).
template <typename T>
__device__ inline T rotate(T x, T partner, T cos, T sin_signed) {
  const T scaled = from_float<T>(to_float(x) * to_float(cos));
  return from_float<T>(to_float(scaled) + to_float(partner) * to_float(sin_signed));
}

template <typename T>
__global__ void __launch_bounds__(kThreads) rope_store(RopeStoreArgs a) {
  const int row = blockIdx.x / a.tokens, token = blockIdx.x % a.tokens, half = a.head_dim / 2;
  const std::int64_t slot = (a.slot_on_device != nullptr ? *a.slot_on_device : a.slot) + token;
  const T* qkv = static_cast<const T*>(a.qkv) + row * a.qkv_stride_b + token * a.qkv_stride_t;
  const T* cos = static_cast<const T*>(a.cos) + row * a.rope_stride_b + token * a.rope_stride_t;
  const T* sin = static_cast<const T*>(a.sin_signed) + row * a.rope_stride_b + token * a.rope_stride_t;
  const std::int64_t cache_row = row * a.cache_stride_b + slot * a.cache_stride_t;
  const int n_rotated = (a.n_heads + a.n_kv_heads) * half, n_values = a.n_kv_heads * half;
  for (int i = threadIdx.x; i < n_rotated + n_values; i += kThreads) {
    if (i < n_rotated) {
      const int head = i / half, e = i % half;
      const T x1 = qkv[head * a.head_dim + e], x2 = qkv[head * a.head_dim + e + half];
      const T r1 = rotate(x1, x2, cos[e], sin[e]);
      const T r2 = rotate(x2, x1, cos[e + half], sin[e + half]);
      T* out = head < a.n_heads ? static_cast<T*>(a.q_out) + (static_cast<std::int64_t>(blockIdx.x) * a.n_heads + head) * a.head_dim
                                : static_cast<T*>(a.k_cache) + cache_row + (head - a.n_heads) * a.cache_stride_h;
      out[e] = r1;
      out[e + half] = r2;
    } else {
      const int j = i - n_rotated, head = j / half, e = 2 * (j % half);
      const T* v = qkv + (a.n_heads + a.n_kv_heads) * a.head_dim + head * a.head_dim + e;
      T* out = static_cast<T*>(a.v_cache) + cache_row + head * a.cache_stride_h + e;
      out[0] = v[0];
      out[1] = v[1];
    }
  }
}

}  // namespace

const char* launch_rope_store(const RopeStoreArgs& args, void* stream) {
  if (args.batch <= 0 || args.tokens <= 0 || args.head_dim <= 0 || args.head_dim % 2 != 0) {
    return "rope store: empty batch or odd head_dim";
  }
  if (args.slot_on_device != nullptr && args.tokens != 1) return "rope store: a device slot takes one token";
  const auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = static_cast<unsigned>(args.batch) * static_cast<unsigned>(args.tokens);
  switch (args.dtype) {
    case DType::FLOAT32: rope_store<float><<<blocks, kThreads, 0, s>>>(args); break;
    case DType::FLOAT16: rope_store<__half><<<blocks, kThreads, 0, s>>>(args); break;
    case DType::BFLOAT16: rope_store<__nv_bfloat16><<<blocks, kThreads, 0, s>>>(args); break;
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace kernelrl::model::cuda
