// compare_buffers: one templated loop per element family (float-like, integer, bool) over a range,
// run on a few threads for big buffers and merged in index order so results never depend on the
// thread count.
#include "eval/checker.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <thread>

namespace kernelrl::eval {

namespace {

// Relative error divides by at least this, so an exact-zero expected gives a large, finite number.
constexpr double rel_error_floor = 1e-12;
// Below this many elements threads cost more than they save.
constexpr std::int64_t parallel_min_numel = std::int64_t{1} << 20;
// Each worker gets at least this many elements.
constexpr std::int64_t min_chunk_numel = std::int64_t{1} << 18;
constexpr unsigned max_threads = 16;

void note_mismatch(CompareResult& r, std::int64_t i, double actual, double expected) {
  if (r.n_mismatch == 0) {  // ranges are scanned in increasing order: the first is the lowest
    r.first_bad_index = i;
    r.actual_at_first_bad = actual;
    r.expected_at_first_bad = expected;
  }
  ++r.n_mismatch;
}

void note_errors(CompareResult& r, double abs_error, double expected) {
  r.max_abs_error = std::max(r.max_abs_error, abs_error);
  r.max_rel_error = std::max(r.max_rel_error, abs_error / std::max(std::fabs(expected), rel_error_floor));
}

// Flat element indices [begin, end) of one worker.
struct Range {
  std::int64_t begin;
  std::int64_t end;
};

// Float-like elements: `decode` turns one stored element into a double exactly.
template <class Elem, class Decode>
void compare_floats(const void* actual_ptr, const void* expected_ptr, Range range, Tolerance tol,
                    Decode decode, CompareResult& r) {
  const auto* actual = static_cast<const Elem*>(actual_ptr);
  const auto* expected = static_cast<const Elem*>(expected_ptr);
  for (std::int64_t i = range.begin; i < range.end; ++i) {
    const double a = decode(actual[i]);
    const double e = decode(expected[i]);
    const bool e_finite = std::isfinite(e);
    if (std::isfinite(a) && e_finite) {
      const double abs_error = std::fabs(a - e);
      note_errors(r, abs_error, e);
      r.sum_sq_error += abs_error * abs_error;
      r.sum_sq_expected += e * e;
      if (!(abs_error <= tol.atol + tol.rtol * std::fabs(e))) note_mismatch(r, i, a, e);
      continue;
    }
    if (e_finite) ++r.n_nonfinite_actual;
    const bool match = (std::isnan(a) && std::isnan(e)) || a == e;
    if (!match) note_mismatch(r, i, a, e);
  }
}

template <class Int>
void compare_ints(const void* actual_ptr, const void* expected_ptr, Range range, Tolerance tol,
                  CompareResult& r) {
  const auto* actual = static_cast<const Int*>(actual_ptr);
  const auto* expected = static_cast<const Int*>(expected_ptr);
  for (std::int64_t i = range.begin; i < range.end; ++i) {
    const Int a = actual[i];
    const Int e = expected[i];
    // The difference is exact in 64 unsigned bits even where a double would round it to zero.
    const std::uint64_t diff = a > e ? static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(e)
                                     : static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(a);
    const double abs_error = static_cast<double>(diff);
    const double e_value = static_cast<double>(e);
    note_errors(r, abs_error, e_value);
    if (diff != 0 && !(abs_error <= tol.atol + tol.rtol * std::fabs(e_value))) {
      note_mismatch(r, i, static_cast<double>(a), e_value);
    }
  }
}

void compare_bools(const void* actual_ptr, const void* expected_ptr, Range range, CompareResult& r) {
  const auto* actual = static_cast<const std::uint8_t*>(actual_ptr);
  const auto* expected = static_cast<const std::uint8_t*>(expected_ptr);
  for (std::int64_t i = range.begin; i < range.end; ++i) {
    const std::uint8_t a = actual[i];
    const std::uint8_t e = expected[i] != 0 ? 1 : 0;
    if (a > 1) {  // not a bool at all (e.g. the 0xAB poison): like NaN, kept out of the errors
      note_mismatch(r, i, a, e);
      continue;
    }
    note_errors(r, a != e ? 1.0 : 0.0, e);
    if (a != e) note_mismatch(r, i, a, e);
  }
}

double decode_f32(float v) { return v; }
double decode_f64(double v) { return v; }
double decode_f16(std::uint16_t v) { return f16_bits_to_float(v); }
double decode_bf16(std::uint16_t v) { return bf16_bits_to_float(v); }

CompareResult compare_range(const void* a, const void* e, Range range, DType dtype, Tolerance tol) {
  CompareResult r;
  r.n_checked = range.end - range.begin;
  switch (dtype) {
    case DType::F32: compare_floats<float>(a, e, range, tol, decode_f32, r); break;
    case DType::F64: compare_floats<double>(a, e, range, tol, decode_f64, r); break;
    case DType::F16: compare_floats<std::uint16_t>(a, e, range, tol, decode_f16, r); break;
    case DType::BF16: compare_floats<std::uint16_t>(a, e, range, tol, decode_bf16, r); break;
    case DType::I8: compare_ints<std::int8_t>(a, e, range, tol, r); break;
    case DType::U8: compare_ints<std::uint8_t>(a, e, range, tol, r); break;
    case DType::I16: compare_ints<std::int16_t>(a, e, range, tol, r); break;
    case DType::I32: compare_ints<std::int32_t>(a, e, range, tol, r); break;
    case DType::I64: compare_ints<std::int64_t>(a, e, range, tol, r); break;
    case DType::BOOL: compare_bools(a, e, range, r); break;
  }
  r.ok = r.n_mismatch == 0;
  return r;
}

// Folds `part` (a later range) into `total`; order of calls must follow the ranges' order.
void merge_into(CompareResult& total, const CompareResult& part) {
  if (total.first_bad_index < 0 && part.first_bad_index >= 0) {
    total.first_bad_index = part.first_bad_index;
    total.actual_at_first_bad = part.actual_at_first_bad;
    total.expected_at_first_bad = part.expected_at_first_bad;
  }
  total.n_checked += part.n_checked;
  total.n_mismatch += part.n_mismatch;
  total.n_nonfinite_actual += part.n_nonfinite_actual;
  total.max_abs_error = std::max(total.max_abs_error, part.max_abs_error);
  total.max_rel_error = std::max(total.max_rel_error, part.max_rel_error);
  total.sum_sq_error += part.sum_sq_error;
  total.sum_sq_expected += part.sum_sq_expected;
  total.ok = total.n_mismatch == 0;
}

unsigned worker_count(std::int64_t numel, unsigned n_threads) {
  if (numel < parallel_min_numel) return 1;
  unsigned requested = n_threads;
  if (requested == 0) requested = std::min(std::max(std::thread::hardware_concurrency(), 1u), max_threads);
  const std::int64_t by_size = (numel + min_chunk_numel - 1) / min_chunk_numel;
  return static_cast<unsigned>(std::min<std::int64_t>(requested, by_size));
}

}  // namespace

Tolerance default_tolerance(DType d) {
  switch (d) {
    case DType::F32:
    case DType::F64:
    case DType::F16: return {1e-2, 1e-2};
    case DType::BF16: return {2e-2, 2e-2};
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::BOOL: return {0, 0};
  }
  return {0, 0};
}

Tolerance kernelbench_tolerance(DType d) {
  switch (d) {
    case DType::F32:
    case DType::F64: return {1e-4, 1e-4};
    case DType::F16:
    case DType::BF16: return {1e-2, 1e-2};
    default: return default_tolerance(d);
  }
}

CompareResult compare_buffers(const void* actual, const void* expected, std::int64_t numel,
                              DType dtype, Tolerance tolerance, unsigned n_threads) {
  if (numel <= 0) return CompareResult{};
  assert(actual != nullptr && expected != nullptr);
  const unsigned n_workers = worker_count(numel, n_threads);
  if (n_workers <= 1) return compare_range(actual, expected, {0, numel}, dtype, tolerance);

  const std::int64_t chunk = (numel + n_workers - 1) / n_workers;
  std::vector<CompareResult> parts(n_workers);
  std::vector<std::thread> threads;
  threads.reserve(n_workers);
  auto run_chunk = [&](unsigned w) {
    const std::int64_t begin = std::min<std::int64_t>(numel, std::int64_t{w} * chunk);
    const std::int64_t end = std::min<std::int64_t>(numel, begin + chunk);
    parts[w] = compare_range(actual, expected, {begin, end}, dtype, tolerance);
  };
  for (unsigned w = 1; w < n_workers; ++w) {
    try {
      threads.emplace_back(run_chunk, w);
    } catch (const std::system_error&) {
      run_chunk(w);  // out of threads: do this chunk here instead
    }
  }
  run_chunk(0);
  for (auto& t : threads) t.join();

  CompareResult total;
  for (const auto& part : parts) merge_into(total, part);
  return total;
}

namespace {

// Values as a model reads them: integers as integers, floats with 6 significant digits and a
// decimal point ("0.0", "0.51"), non-finite as "nan" / "inf" / "-inf".
std::string format_value(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (!is_floating(dtype)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format_error(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string format_index(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  const std::vector<std::int64_t> coords = unravel(flat, shape);
  if (coords.empty()) return std::to_string(flat) + " (flat)";
  std::string s = "[";
  for (std::size_t k = 0; k < coords.size(); ++k) {
    if (k > 0) s += ", ";
    s += std::to_string(coords[k]);
  }
  return s + "] (flat " + std::to_string(flat) + ")";
}

}  // namespace

std::string describe(const CompareResult& result, std::string_view label, DType dtype,
                     const std::vector<std::int64_t>& shape) {
  std::string s(label);
  s += ": ";
  const std::string errors = "max abs err " + format_error(result.max_abs_error) + ", max rel err " +
                             format_error(result.max_rel_error);
  if (result.n_checked == 0) return s + "empty, nothing to compare";
  if (result.n_mismatch == 0) {
    return s + "all " + std::to_string(result.n_checked) + " elements match (" + errors + ")";
  }
  s += std::to_string(result.n_mismatch) + " of " + std::to_string(result.n_checked) + " elements differ";
  // With no finite pair the errors are 0 and would suggest a near miss.
  if (result.max_abs_error > 0) s += " (" + errors + ")";
  s += "; first at index " + format_index(result.first_bad_index, shape) + ": got ";
  const double got = result.actual_at_first_bad;
  if (dtype == DType::BOOL && got > 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "byte 0x%02x (not a bool: 0 or 1)", static_cast<unsigned>(got));
    s += buf;
  } else {
    s += format_value(got, dtype);
  }
  s += ", expected " + format_value(result.expected_at_first_bad, dtype);
  if (result.n_nonfinite_actual > 0) {
    s += "; " + std::to_string(result.n_nonfinite_actual) + " NaN/inf where a finite value was expected";
  }
  return s;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || flat < 0) return {};
  std::int64_t numel = 1;
  for (std::int64_t extent : shape) {
    if (extent < 0) return {};
    numel *= extent;
  }
  if (flat >= numel) return {};
  std::vector<std::int64_t> coords(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    coords[k] = flat % shape[k];
    flat /= shape[k];
  }
  return coords;
}

}  // namespace kernelrl::eval
