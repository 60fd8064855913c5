// One new token per row attending over a key/value cache on the GPU with the model's own CUDA
// kernel (decode_attention_kernel.hpp): reads each cached key/value once and skips the slots that
// a CUDA-graph step has not written yet. Where it does not apply (CPU, training, other shapes or
// head sizes, a build without the kernels) the caller uses scaled_dot_product_attention.
#pragma once

#include <torch/types.h>

namespace kernelrl::model {

// Whether this build has the kernel (a CUDA libtorch and a CUDA compiler at build time).
bool decode_kernel_built();

// Process-wide switch, on by default: off makes decode_attention_applies() false (for tests and
// benchmarks that compare against libtorch's attention). Thread-safe.
void set_decode_kernel_enabled(bool enabled);
bool decode_kernel_enabled();

// Whether decode_attention() takes these tensors: q [B, 1, H, D] and k, v [B, H_kv, L, D] on one
// CUDA device, the same float dtype, D 64 or 128, H a multiple of H_kv by at most 8, head_dim
// contiguous, no autograd; allowed undefined or bool [B, 1, 1, L] with contiguous slots.
bool decode_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed);

// softmax(q k^T / sqrt(D), keys where `allowed`) v per query head, the query heads of a group
// sharing one key/value head; [B, 1, H * D] in q's dtype. `last_key` (optional [1] int64 on the
// device) is the last slot to read: later slots are skipped, whatever `allowed` says. Throws
// c10::Error on a CUDA launch error.
torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& allowed, const torch::Tensor& last_key);

}  // namespace kernelrl::model
