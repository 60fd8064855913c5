// Decoding through a CUDA graph: the per-token forward of a small model launches hundreds of
// kernels (about 25 per layer), so at batch sizes where the GPU is far from busy the host's launch
// rate sets the speed. DecodeGraph runs the first decode step eagerly (which also warms cuBLAS
// and attention up on this stream), captures the same step on static input buffers as a KV-cache
// slot step (KvCache::begin_at), and replays it for every later token: one launch per token.
// Available where libtorch was built with CUDA (KERNELRL_CUDA_GRAPHS); elsewhere
// cuda_graphs_available() is false and the sampler keeps its eager loop.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "model/kv_cache.hpp"
#include "model/transformer.hpp"

namespace kernelrl::model {

bool cuda_graphs_available();

// For its lifetime, makes a stream from CUDA's pool current on `device` (graphs cannot be captured
// on the default stream); it starts after the work queued on the previous stream, and the previous
// stream waits for its work at the end. Create it before any tensor of the generation. No-op where
// graphs are unavailable.
class GraphStream {
 public:
  explicit GraphStream(const torch::Device& device);
  ~GraphStream();
  GraphStream(const GraphStream&) = delete;
  GraphStream& operator=(const GraphStream&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class DecodeGraph {
 public:
  // `model` and `cache` must outlive this object; the cache has been prefilled.
  DecodeGraph(Transformer& model, KvCache& cache);
  ~DecodeGraph();
  DecodeGraph(const DecodeGraph&) = delete;
  DecodeGraph& operator=(const DecodeGraph&) = delete;

  // Logits [B, vocab] for tokens [B, 1] at positions [B, 1], their keys/values written to cache
  // slot `slot`. The returned tensor is a buffer the next step overwrites: read it before then.
  // Throws c10::Error where graphs are unavailable.
  torch::Tensor step(const torch::Tensor& tokens, const torch::Tensor& positions, std::int64_t slot);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernelrl::model
