// Output checking: compares a candidate's output buffer with the reference, element by element,
// on the host, and says in one line what is wrong. Every kernel is judged here before it is timed.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eval/dtype.hpp"

namespace kernelrl::eval {

// Element i matches when |actual - expected| <= atol + rtol * |expected| (both finite).
struct Tolerance {
  double atol;  // absolute slack, in the output's units
  double rtol;  // slack relative to |expected|
};

// F32/F64/F16: 1e-2 each; BF16: 2e-2 each; integers and bool: exact (0, 0).
Tolerance default_tolerance(DType d);

// KernelBench's tolerance for an output computed at its dtype's precision (its eval.py,
// get_tolerance_for_precision, used for atol and rtol alike): F32/F64 1e-4, F16/BF16 1e-2;
// integers and bool exact. The default of `--rules kernelbench` (docs/security.md, "Rule sets").
Tolerance kernelbench_tolerance(DType d);

struct CompareResult {
  bool ok = true;                     // n_mismatch == 0
  std::int64_t n_checked = 0;         // elements compared (numel)
  std::int64_t n_mismatch = 0;        // elements outside tolerance, wrong NaN/inf, invalid bool
  std::int64_t first_bad_index = -1;  // lowest flat index of a mismatch; -1 if none
  double max_abs_error = 0;           // max |a - e| over pairs where both are finite (bool: valid)
  double max_rel_error = 0;           // max |a - e| / max(|e|, 1e-12) over the same pairs
  double actual_at_first_bad = 0;     // values at first_bad_index (bool: the raw actual byte)
  double expected_at_first_bad = 0;
  std::int64_t n_nonfinite_actual = 0;  // actual NaN/inf where the expected is finite
  double sum_sq_error = 0;            // floats: sum of (a - e)^2 over pairs where both are finite
  double sum_sq_expected = 0;         // floats: sum of e^2 over the same pairs
  // ||a - e|| / ||e|| over those pairs (0 when ||e|| is 0); equal for any thread count up to rounding.
  double relative_l2_error() const { return sum_sq_expected > 0 ? std::sqrt(sum_sq_error / sum_sq_expected) : 0.0; }
};

// Compares `numel` elements of `dtype` at `actual` and `expected` (host memory, unchanged).
// Match: both NaN, or equal (incl. same-sign inf), or finite and within `tolerance`. A NaN or inf
// where the expected is finite is a mismatch. Bool: the expected is normalised (non-zero -> 1) and
// any actual byte other than 0 or 1 is a mismatch; tolerance is ignored. Integers compare exactly
// unless the tolerance allows slack. `n_threads` 0 means min(hardware threads, 16); under ~1M
// elements it runs on the calling thread. The result is the same for any thread count.
CompareResult compare_buffers(const void* actual, const void* expected, std::int64_t numel,
                              DType dtype, Tolerance tolerance, unsigned n_threads = 0);

// One line for a model, e.g. "output 0: 37 of 1048576 elements differ (max abs err 0.51, max rel
// err 2.1); first at index [1, 1023] (flat 2047): got 0.0, expected 0.51". `label` names the
// buffer ("output 0"); `shape` (optional) turns the flat index into coordinates.
std::string describe(const CompareResult& result, std::string_view label, DType dtype,
                     const std::vector<std::int64_t>& shape = {});

// Row-major coordinates of `flat` in `shape`; empty when the shape is empty, has a negative
// extent, or `flat` is outside [0, product of extents).
std::vector<std::int64_t> unravel(std::int64_t flat, const std::vector<std::int64_t>& shape);

}  // namespace kernelrl::eval
