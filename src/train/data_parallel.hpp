// Data-parallel training's communication between ranks (which samples a rank works on is
// rank_split.hpp; the trainer sees only the RankGroup interface). Each rank (one process, one GPU
// one day) computes gradients on its share of a step's samples, normalised by the step's GLOBAL
// sample count; sum_gradients then leaves the sum over all ranks in every parameter's .grad() on
// every rank, so the same optimizer step on every rank keeps the ranks' parameters equal to one
// process's that did all the samples. The sum goes through libtorch's c10d: a TCPStore (rank 0
// serves it) for the rendezvous and a ProcessGroupGloo for CPU tensors. CUDA tensors would go to
// NCCL (Backend::NCCL), which is not built yet: they are an error. With world_size 1 nothing
// connects and every exchange is a no-op.
// Built only where gloo's headers are (src/train/CMakeLists.txt: KERNELRL_DATA_PARALLEL).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/expected.hpp"
#include "train/rank_group.hpp"
#include "train/rank_split.hpp"

namespace kernelrl::train {

// The collective library that sums: gloo (CPU tensors, built here) or NCCL (CUDA tensors, not built
// yet: connecting with it is an error saying so). The one place a CUDA backend would be added.
enum class Backend { GLOO, NCCL };

std::string backend_name(Backend backend);  // "gloo", "nccl"

// Whether this build can sum over `backend`: gloo yes; NCCL an error naming what is missing.
common::Fallible check_backend(Backend backend);

// Sums the ranks' gradients in place (and the few numbers and texts the trainer exchanges: the
// RankGroup interface). Not thread-safe; one per rank; movable, not copyable.
class GradientAllReduce final : public RankGroup {
 public:
  GradientAllReduce();
  ~GradientAllReduce() override;
  GradientAllReduce(GradientAllReduce&&) noexcept;
  GradientAllReduce& operator=(GradientAllReduce&&) noexcept;

  // Joins the group of `info.world_size` ranks that meet at host:port (rank 0 listens there). Fails
  // (never hangs) when not every rank has joined within `timeout`, which also bounds each later
  // collective. world_size 1: checks `info` and connects nothing. Backend::NCCL: an error (not built).
  common::Fallible connect(RankInfo info, const std::string& host, int port, std::chrono::milliseconds timeout,
                           Backend backend = Backend::GLOO);

  // Replaces every parameter's .grad() by its sum over the ranks. All ranks must pass the same
  // parameters (same order, dtypes and sizes). A parameter without a gradient on this rank
  // contributes zeros; after the call it has the summed gradient on every rank if any rank had one,
  // and none if no rank had one (as for one process doing all the samples, whose optimizer skips it).
  // One all-reduce per dtype (the gradients and a has-gradient flag per parameter are flattened into
  // one buffer per dtype and copied back). world_size 1: no-op. Fails if not connected, on CUDA
  // tensors (NCCL is not built yet) or when a rank is gone.
  common::Fallible sum_gradients(const std::vector<torch::Tensor>& parameters) override;

  // Each value's sum (maximum) over the ranks, in one all-reduce of doubles. world_size 1: no-op.
  common::Fallible sum_values(std::vector<double>& values) override;
  common::Fallible max_values(std::vector<double>& values) override;

  // Every rank's text in rank order, through the rendezvous store (keys numbered by call, so every
  // rank must make the same calls). world_size 1: {text}.
  common::Expected<std::vector<std::string>> all_gather(const std::string& text) override;

  // Returns once every rank has called it. world_size 1: returns at once.
  common::Fallible barrier() override;

  const RankInfo& rank_info() const override { return info_; }
  bool connected() const;

 private:
  struct Group;  // the c10d store and process group (data_parallel.cpp), kept out of this header
  RankInfo info_;
  std::unique_ptr<Group> group_;
  long n_gathers_ = 0;  // all_gather calls so far: the store keys of the next one
};

}  // namespace kernelrl::train
