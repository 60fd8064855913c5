#include "model/decode_graph.hpp"

#if KERNELRL_CUDA_GRAPHS
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace kernelrl::model {

#if KERNELRL_CUDA_GRAPHS

bool cuda_graphs_available() { return true; }

struct GraphStream::Impl {
  c10::cuda::CUDAStream previous;
  c10::cuda::CUDAStream side;
  c10::cuda::CUDAStreamGuard guard;  // declared last: makes `side` current once both are known

  explicit Impl(c10::DeviceIndex device)
      : previous(c10::cuda::getCurrentCUDAStream(device)),
        side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device)),
        guard(side) {
    at::cuda::CUDAEvent ready;
    ready.record(previous);
    ready.block(side);
  }
  ~Impl() {
    at::cuda::CUDAEvent done;
    done.record(side);
    done.block(previous);
  }
};

GraphStream::GraphStream(const torch::Device& device) {
  if (device.is_cuda()) impl_ = std::make_unique<Impl>(device.has_index() ? device.index() : c10::cuda::current_device());
}
GraphStream::~GraphStream() = default;

struct DecodeGraph::Impl {
  Transformer& model;
  KvCache& cache;
  at::cuda::CUDAGraph graph;
  torch::Tensor tokens, positions, slot, logits;  // the graph's inputs and output (defined once captured)

  Impl(Transformer& m, KvCache& c) : model(m), cache(c) {}
};

DecodeGraph::DecodeGraph(Transformer& model, KvCache& cache) : impl_(std::make_unique<Impl>(model, cache)) {}
DecodeGraph::~DecodeGraph() = default;

torch::Tensor DecodeGraph::step(const torch::Tensor& tokens, const torch::Tensor& positions, std::int64_t slot) {
  auto& s = *impl_;
  if (!s.logits.defined()) {
    s.tokens = tokens.clone();
    s.positions = positions.clone();
    s.slot = torch::full({1}, slot, tokens.options().dtype(torch::kInt64));
    // This step, eagerly on the static buffers: its result, and the warm-up capture needs.
    auto first = s.model->forward_last_at(s.tokens, s.positions, s.cache, s.slot);
    s.graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    torch::Tensor captured_logits;
    try {
      captured_logits = s.model->forward_last_at(s.tokens, s.positions, s.cache, s.slot);
    } catch (...) {
      try {
        s.graph.capture_end();
      } catch (...) {
      }
      throw;
    }
    s.graph.capture_end();
    s.logits = captured_logits;  // set only once the capture has succeeded
    return first;
  }
  s.tokens.copy_(tokens);
  s.positions.copy_(positions);
  s.slot.fill_(slot);
  s.graph.replay();
  return s.logits;
}

#else

bool cuda_graphs_available() { return false; }

struct GraphStream::Impl {};
GraphStream::GraphStream(const torch::Device&) {}
GraphStream::~GraphStream() = default;

struct DecodeGraph::Impl {};
DecodeGraph::DecodeGraph(Transformer&, KvCache&) {}
DecodeGraph::~DecodeGraph() = default;

torch::Tensor DecodeGraph::step(const torch::Tensor&, const torch::Tensor&, std::int64_t) {
  TORCH_CHECK(false, "DecodeGraph: this build's libtorch has no CUDA graphs");
}

#endif

}  // namespace kernelrl::model
