// The model's own CUDA kernels for decoding one token per row, where libtorch would launch many
// small kernels or read more than needed: rotary embedding + key/value cache write in one kernel
// (rope_store_kernel.hpp), attention over the cache that reads each cached key/value once and
// skips the slots a CUDA-graph step has not written yet (decode_attention_kernel.hpp), SwiGLU in
// one kernel (swiglu_kernel.hpp), and the sampling step in one pass over the logits
// (sample_kernel.hpp). Where they
// do not apply (CPU, training, other shapes or head sizes, a build without the kernels) the
// callers use libtorch's operators.
#pragma once

#include <cstdint>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "model/layers.hpp"

namespace kernelrl::model {

class KvCache;

// Whether this build has the kernels (a CUDA libtorch and a CUDA compiler at build time).
bool decode_kernels_built();

// Process-wide switch, on by default: off makes every *_applies() false (for tests and
// benchmarks that compare against libtorch's operators). Thread-safe.
void set_decode_kernels_enabled(bool enabled);
bool decode_kernels_enabled();

// Whether decode_attention() takes these tensors: q [B, 1, H, D] and k, v [B, H_kv, L, D] on one
// CUDA device, the same float dtype, D 64 or 128, H a multiple of H_kv by at most 8, head_dim
// contiguous and 16-byte aligned rows, no autograd; allowed undefined or bool [B, 1, 1, L] with
// contiguous slots.
bool decode_attention_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& allowed);

// softmax(q k^T / sqrt(D), keys where `allowed`) v per query head, the query heads of a group
// sharing one key/value head; [B, 1, H * D] in q's dtype. `last_key` (optional [1] int64 on the
// device) is the last slot to read: later slots are skipped, whatever `allowed` says. Throws
// c10::Error on a CUDA launch error.
torch::Tensor decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& allowed, const torch::Tensor& last_key);

// Whether rope_and_store() takes this step: qkv [B, T, (H + 2 H_kv) * D] (the fused projection of
// T tokens per row) on a CUDA device in a float dtype, head dims contiguous; rope tables of that
// dtype [B or 1, T, 1, D]; `cache` of that dtype and device with T tokens pending (begin, or
// begin_at with T = 1).
bool rope_store_applies(const torch::Tensor& qkv, const Rope& rope, const KvCache& cache, std::int64_t n_heads,
                        std::int64_t n_kv_heads, std::int64_t head_dim);

// apply_rope on the query and key heads of `qkv` (bit for bit in 16-bit dtypes), the keys and the
// values written to `cache` layer `layer` at the pending slots; returns the rotated queries
// [B, T, H, D]. Afterwards cache.stored(layer) gives what cache.store() would have. Throws
// c10::Error on a CUDA launch error.
torch::Tensor rope_and_store(const torch::Tensor& qkv, const Rope& rope, KvCache& cache, std::int64_t layer,
                             std::int64_t n_heads, std::int64_t n_kv_heads, std::int64_t head_dim);

// Whether swiglu() takes this fused gate/up projection: [.., 2 * inner] on a CUDA device in a
// float dtype, contiguous, no autograd.
bool swiglu_applies(const torch::Tensor& gate_up);

// silu(gate) * up for gate_up = [gate, up] along the last dimension, rounded as libtorch's silu
// then product; [.., inner]. Throws c10::Error on a CUDA launch error.
torch::Tensor swiglu(const torch::Tensor& gate_up);

// Whether sample_with_kernel() takes these logits: [B, V] on a CUDA device in a float dtype, V
// contiguous; top_p 1 (nucleus filtering needs a sort: the caller's libtorch path does it).
bool sample_kernel_applies(const torch::Tensor& logits, double top_p);

// One sampling step: token[b] = argmax(logits[b]) when temperature is 0, else a draw from
// softmax(logits[b] / temperature) (Gumbel-max with Philox numbers from `generator`, a CUDA
// generator on the logits' device, whose offset advances); logprob[b] = log_softmax(logits[b])
// at the token; sampling_logprob[b] the same under the sampled distribution (0 when greedy).
// Outputs: [B] int64 / float32 on the device, strided views allowed (columns of a [B, steps]
// buffer). Throws c10::Error on a CUDA launch error.
void sample_with_kernel(const torch::Tensor& logits, double temperature, at::Generator& generator,
                        const torch::Tensor& token, const torch::Tensor& logprob, const torch::Tensor& sampling_logprob);

}  // namespace kernelrl::model
