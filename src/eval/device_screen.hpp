// A fast first pass of the output check where the tensors live (on the GPU): counts the elements
// that break the checker's rule and the output's relative L2 error, so a correct output is never
// copied to the host. The rule is the one compare_buffers applies (checker.hpp), evaluated in
// float64 for floats; when the screen finds any mismatch the host checker runs and its verdict
// and description are the ones reported. CUDA tensors go through the engine's own kernels where
// they are built (device_check_kernels.hpp), everything else through torch's operators.
// Python objects: interpreter thread only.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "eval/checker.hpp"
#include "eval/dtype.hpp"

namespace kernelrl::eval {

struct Screen {
  std::int64_t n_mismatch = 0;
  // ||actual - expected||_2 / ||expected||_2 over the elements where both are finite (floating
  // dtypes; 0 otherwise and when the expected norm is 0). Catches outputs whose every element
  // hides inside the absolute tolerance (all zeros for a softmax over 32k columns).
  double relative_l2 = 0;
};

// `actual` against `expected` (same shape and dtype, same device) under `tolerance`. Throws
// (pybind11 or std::runtime_error) when the tensors cannot be read.
Screen screen_outputs(const pybind11::object& actual, const pybind11::object& expected, DType dtype,
                      Tolerance tolerance);

// The same with torch's operators whatever the device (what screen_outputs runs where the
// engine's kernels are not built or the tensors are not on a GPU).
Screen screen_outputs_with_torch(const pybind11::object& actual, const pybind11::object& expected, DType dtype,
                                 Tolerance tolerance);

}  // namespace kernelrl::eval
