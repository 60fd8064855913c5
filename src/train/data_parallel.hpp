// Data-parallel training's two pieces that need no GPU: which samples a rank works on, and the sum
// of the ranks' gradients. Each rank (one process, one GPU one day) computes gradients on its share
// of a step's samples, normalised by the step's GLOBAL sample count; sum_gradients then leaves the
// sum over all ranks in every parameter's .grad() on every rank, so the same optimizer step on every
// rank keeps the ranks' parameters equal to one process's that did all the samples.
// The sum goes through libtorch's c10d: a TCPStore (rank 0 serves it) for the rendezvous and a
// ProcessGroupGloo for CPU tensors. CUDA tensors would go to NCCL, which is not built yet: they are
// an error. With world_size 1 nothing connects and sum_gradients is a no-op.
// Built only where gloo's headers are (src/train/CMakeLists.txt: KERNELRL_DATA_PARALLEL).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/expected.hpp"

namespace kernelrl::train {

struct RankInfo {
  int rank = 0;        // 0 .. world_size - 1; rank 0 serves the rendezvous store
  int world_size = 1;  // number of ranks (processes)
};

// Items [begin, end) of a rank's contiguous share.
struct Share {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
};

// Rank `info.rank`'s share of n items: the shares are contiguous, in rank order, cover every item
// exactly once, and their sizes differ by at most one (the first n % world_size ranks get one more).
// Requires 0 <= rank < world_size (checked by the caller; connect() checks it).
Share rank_share(std::size_t n, RankInfo info);

// Sums the ranks' gradients in place. Not thread-safe; one per rank; movable, not copyable.
class GradientAllReduce {
 public:
  GradientAllReduce();
  ~GradientAllReduce();
  GradientAllReduce(GradientAllReduce&&) noexcept;
  GradientAllReduce& operator=(GradientAllReduce&&) noexcept;

  // Joins the group of `info.world_size` ranks that meet at host:port (rank 0 listens there). Fails
  // (never hangs) when not every rank has joined within `timeout`, which also bounds each later
  // collective. world_size 1: checks `info` and connects nothing.
  common::Fallible connect(RankInfo info, const std::string& host, int port, std::chrono::milliseconds timeout);

  // Replaces every parameter's .grad() by its sum over the ranks. All ranks must pass the same
  // parameters (same order, dtypes and sizes). A parameter without a gradient on this rank
  // contributes zeros; after the call it has the summed gradient on every rank if any rank had one,
  // and none if no rank had one (as for one process doing all the samples, whose optimizer skips it).
  // One all-reduce per dtype (the gradients and a has-gradient flag per parameter are flattened into
  // one buffer per dtype and copied back). world_size 1: no-op. Fails if not connected, on CUDA
  // tensors (NCCL is not built yet) or when a rank is gone.
  common::Fallible sum_gradients(const std::vector<torch::Tensor>& parameters);

  // Returns once every rank has called it. world_size 1: returns at once.
  common::Fallible barrier();

  const RankInfo& rank_info() const { return info_; }
  bool connected() const;

 private:
  struct Group;  // the c10d store and process group (data_parallel.cpp), kept out of this header
  RankInfo info_;
  std::unique_ptr<Group> group_;
};

}  // namespace kernelrl::train
