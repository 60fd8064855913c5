// One sampling step for a batch of rows as one CUDA kernel (block per row, one pass over the
// logits): the log-softmax normalisers at temperature 1 and at the sampling temperature, and a
// Gumbel-max draw (argmax of logits / temperature - log E, E ~ Exp(1) from Philox) or the argmax
// when greedy; writes the token, its log-prob at temperature 1 and under the sampled distribution.
// Raw pointers only (see decode_attention_kernel.hpp).
#pragma once

#include <cstdint>

#include "model/decode_attention_kernel.hpp"

namespace kernelrl::model::cuda {

inline constexpr int kSampleThreads = 1024;

struct SampleArgs {
  const void* logits = nullptr;  // [B, V], V contiguous
  std::int64_t logits_stride_b = 0;
  std::int64_t vocab = 0;
  DType dtype = DType::FLOAT32;
  float temperature = 1.0f;  // 0: greedy (argmax; sampling log-prob 0)
  std::uint64_t seed = 0, offset = 0;  // Philox: subsequence row * kSampleThreads + thread
  std::int64_t* token = nullptr;  // token[b * token_stride]
  std::int64_t token_stride = 1;
  float* logprob = nullptr;  // logprob[b * logprob_stride], log-softmax at temperature 1
  std::int64_t logprob_stride = 1;
  float* sampling_logprob = nullptr;  // under the distribution sampled from
  std::int64_t sampling_logprob_stride = 1;
  int batch = 0;
};

// 32-bit random numbers each thread draws for `vocab` (the Philox offset advances by this).
inline std::uint64_t sample_randoms_per_thread(std::int64_t vocab) {
  const auto per_thread = static_cast<std::uint64_t>((vocab + kSampleThreads - 1) / kSampleThreads);
  return (per_thread + 3) / 4 * 4;
}

// Queues the kernel on `stream` (a cudaStream_t). Returns null, or the CUDA error's text.
const char* launch_sample(const SampleArgs& args, void* stream);

}  // namespace kernelrl::model::cuda
