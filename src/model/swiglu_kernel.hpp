// The SwiGLU activation of the fused gate/up projection as one CUDA kernel: out = silu(gate) * up
// with libtorch's rounding (silu rounded to the dtype, then the product rounded), reading the two
// halves of each [.., 2 * inner] row in place. Raw pointers only (see decode_attention_kernel.hpp).
#pragma once

#include <cstdint>

#include "model/decode_attention_kernel.hpp"

namespace kernelrl::model::cuda {

struct SwigluArgs {
  const void* gate_up = nullptr;  // [rows, 2 * inner] contiguous: gate then up
  void* out = nullptr;            // [rows, inner] contiguous
  std::int64_t rows = 0, inner = 0;
  DType dtype = DType::FLOAT32;
};

// Queues the kernel on `stream` (a cudaStream_t). Returns null, or the CUDA error's text.
const char* launch_swiglu(const SwigluArgs& args, void* stream);

}  // namespace kernelrl::model::cuda
