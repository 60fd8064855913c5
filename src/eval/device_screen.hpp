// A fast first pass of the output check where the tensors live (on the GPU): counts the elements
// that break the checker's rule, with torch ops, so a correct output is never copied to the host.
// The rule is the one compare_buffers applies (checker.hpp), evaluated in float64 for floats;
// when the screen finds any mismatch the host checker runs and its verdict and description are
// the ones reported. Python objects: interpreter thread only.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "eval/checker.hpp"
#include "eval/dtype.hpp"

namespace kernelrl::eval {

// Number of elements of `actual` that do not match `expected` (same shape and dtype, same
// device) under `tolerance`.
std::int64_t count_mismatches(const pybind11::object& actual, const pybind11::object& expected, DType dtype,
                              Tolerance tolerance);

// ||actual - expected||_2 / ||expected||_2 over the elements where both are finite, in float64,
// on the tensors' device (floating dtypes); 0 when the expected norm is 0. Catches outputs whose
// every element hides inside the absolute tolerance (all zeros for a softmax over 32k columns).
double relative_l2_error(const pybind11::object& actual, const pybind11::object& expected);

}  // namespace kernelrl::eval
