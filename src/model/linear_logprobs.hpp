// log p(target | hidden) and the entropy of p, where p = softmax(hidden @ weight^T / temperature),
// without holding the [N, vocab] float32 logits: forward and backward walk the rows in chunks and
// recompute each chunk's logits (a fused "linear + cross-entropy"). Differentiable in hidden and
// weight; peak extra memory is a few [chunk, vocab] float32 buffers.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/types.h>

namespace kernelrl::model {

struct LinearLogprobsOptions {
  std::int64_t chunk_rows = 2048;  // rows of [chunk_rows, vocab] float32 logits materialised at once
  bool with_entropy = false;       // also return the entropy (nats) of p at each row
  double temperature = 1.0;        // p = softmax(logits / temperature)
};

// hidden [N, D], weight [V, D], targets [N] int64 in [0, V) -> (log p(target) [N] float32,
// entropy [N] float32 or undefined). Matmuls run in the autocast dtype when autocast is on for the
// device, else in weight's dtype; softmax statistics in float32 (float64 for float64 inputs).
std::pair<torch::Tensor, torch::Tensor> linear_logprobs(const torch::Tensor& hidden, const torch::Tensor& weight,
                                                        const torch::Tensor& targets,
                                                        const LinearLogprobsOptions& options = {});

}  // namespace kernelrl::model
