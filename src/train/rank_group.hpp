// What a data-parallel rank's trainer needs from the other ranks: the sum of the gradients, sums
// and maxima of a few numbers (counts and the step log's metrics), an exchange of short texts (the
// step's sample keys) and a barrier. Every rank makes the same calls in the same order. The
// implementation over c10d/gloo is GradientAllReduce (data_parallel.hpp), built only where gloo is;
// the trainer depends on this interface alone, so it builds without gloo, and without a group
// (null) it takes the single process's path.
#pragma once

#include <string>
#include <vector>

#include <torch/types.h>

#include "common/expected.hpp"
#include "train/rank_split.hpp"

namespace kernelrl::train {

class RankGroup {
 public:
  virtual ~RankGroup() = default;

  virtual const RankInfo& rank_info() const = 0;

  // Replaces every parameter's .grad() by its sum over the ranks (a missing one counts as zeros).
  virtual common::Fallible sum_gradients(const std::vector<torch::Tensor>& parameters) = 0;

  // Replaces each value by its sum (max_values: its maximum) over the ranks, in double precision.
  virtual common::Fallible sum_values(std::vector<double>& values) = 0;
  virtual common::Fallible max_values(std::vector<double>& values) = 0;

  // Every rank's `text`, in rank order.
  virtual common::Expected<std::vector<std::string>> all_gather(const std::string& text) = 0;

  // Returns once every rank has called it.
  virtual common::Fallible barrier() = 0;
};

}  // namespace kernelrl::train
