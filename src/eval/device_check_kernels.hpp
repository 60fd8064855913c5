// The engine's own CUDA kernels for the checks of every trial: the output check's first pass
// (mismatch count under the checker's rule and the sums of the relative L2 error, one read of
// each tensor) and byte equality of inputs and parameters with their untouched copies.
// torch's operators did the same with a dozen float64 temporaries and several large kernel
// modules, which a freshly forked evaluation loads on first use (~0.2-0.3 s per child on an H200,
// measured 2026-11-30). Built where the engine is built with CUDA kernels
// (KERNELRL_EVAL_CUDA_KERNELS, cmake/cuda_kernels.cmake); device_screen.cpp and
// torch_tensors.cpp fall back on torch's operators elsewhere. Pointers are device pointers to
// contiguous data; the work runs on the legacy default stream, so it follows all work queued on
// blocking streams (torch's and the candidate's), and each call returns when it is done.
#pragma once

#include <cstdint>

#include "common/expected.hpp"
#include "eval/checker.hpp"
#include "eval/dtype.hpp"

namespace kernelrl::eval::gpu {

struct ElementCheckSums {
  std::int64_t n_mismatch = 0;   // elements breaking compare_buffers' rule (checker.hpp)
  double sum_sq_error = 0;       // over the elements where both are finite (floating dtypes)
  double sum_sq_expected = 0;
};

// Counts what compare_buffers would count over `numel` elements of `dtype`, and the sums of its
// relative L2 error.
common::Expected<ElementCheckSums> check_elements_on_device(const void* actual, const void* expected,
                                                            std::int64_t numel, DType dtype, Tolerance tolerance);

// Whether `bytes` bytes at `a` and `b` are the same.
common::Expected<bool> bytes_equal_on_device(const void* a, const void* b, std::int64_t bytes);

// One thread writes 1 to `flag` (a device word), on `stream`, not waited for: the end mark of a call
// timed on the host clock (gpu::EndMark).
common::Fallible launch_end_mark(void* flag, void* stream);

// Loads the kernels' module and allocates the result buffer (no kernel runs): a child forked
// ahead of its request does this before it is needed.
common::Fallible preload_device_checks();

}  // namespace kernelrl::eval::gpu
