// compare_buffers must catch every way an output can be wrong (off by a little, NaN, inf,
// never written, invalid bool) and accept everything within tolerance, for every dtype and any
// thread count; describe() must say so in one readable line.
#include "eval/checker.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace kernelrl::eval {
namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();

template <class T>
CompareResult compare(const std::vector<T>& actual, const std::vector<T>& expected, DType d, Tolerance tol) {
  EXPECT_EQ(actual.size(), expected.size());
  return compare_buffers(actual.data(), expected.data(), static_cast<std::int64_t>(actual.size()), d, tol);
}

std::vector<std::uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out;
  for (float x : v) out.push_back(float_to_f16_bits(x));
  return out;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out;
  for (float x : v) out.push_back(float_to_bf16_bits(x));
  return out;
}

TEST(Checker, DefaultTolerances) {
  EXPECT_EQ(default_tolerance(DType::F32).atol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::F32).rtol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::F64).atol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::F16).rtol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::BF16).atol, 2e-2);
  EXPECT_EQ(default_tolerance(DType::BF16).rtol, 2e-2);
  for (DType d : {DType::I8, DType::U8, DType::I16, DType::I32, DType::I64, DType::BOOL}) {
    EXPECT_EQ(default_tolerance(d).atol, 0) << to_string(d);
    EXPECT_EQ(default_tolerance(d).rtol, 0) << to_string(d);
  }
}

// KernelBench's get_tolerance_for_precision: 1e-4 for float32, 1e-2 for the half types.
TEST(Checker, KernelbenchTolerances) {
  EXPECT_EQ(kernelbench_tolerance(DType::F32).atol, 1e-4);
  EXPECT_EQ(kernelbench_tolerance(DType::F32).rtol, 1e-4);
  EXPECT_EQ(kernelbench_tolerance(DType::F64).rtol, 1e-4);
  EXPECT_EQ(kernelbench_tolerance(DType::F16).atol, 1e-2);
  EXPECT_EQ(kernelbench_tolerance(DType::BF16).rtol, 1e-2);
  for (DType d : {DType::I8, DType::U8, DType::I16, DType::I32, DType::I64, DType::BOOL}) {
    EXPECT_EQ(kernelbench_tolerance(d).atol, 0) << to_string(d);
  }
  // A value off by a relative 1e-3 is inside the strict tolerance and outside KernelBench's.
  const std::vector<float> expected = {0.5f, 1.0f, 2.0f}, actual = {0.5005f, 1.001f, 2.002f};
  EXPECT_TRUE(compare_buffers(actual.data(), expected.data(), 3, DType::F32, default_tolerance(DType::F32)).ok);
  EXPECT_FALSE(compare_buffers(actual.data(), expected.data(), 3, DType::F32, kernelbench_tolerance(DType::F32)).ok);
}

TEST(Checker, EmptyBufferIsOk) {
  const CompareResult r = compare_buffers(nullptr, nullptr, 0, DType::F32, {0, 0});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.n_checked, 0);
  EXPECT_EQ(r.first_bad_index, -1);
}

TEST(Checker, F32IdenticalBuffersMatch) {
  const std::vector<float> v = {0.0f, -1.5f, 3.25f, 1e30f, -0.0f};
  const CompareResult r = compare(v, v, DType::F32, {0, 0});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.n_checked, 5);
  EXPECT_EQ(r.n_mismatch, 0);
  EXPECT_EQ(r.first_bad_index, -1);
  EXPECT_EQ(r.max_abs_error, 0);
}

TEST(Checker, ToleranceEdgeIsInclusive) {
  // Bound at expected 2.0: atol 0.5 + rtol 0.25 * 2 = 1.0, all exact in binary.
  const Tolerance tol{0.5, 0.25};
  EXPECT_TRUE(compare(std::vector<double>{3.0}, {2.0}, DType::F64, tol).ok);
  EXPECT_TRUE(compare(std::vector<double>{1.0}, {2.0}, DType::F64, tol).ok);
  EXPECT_FALSE(compare(std::vector<double>{std::nextafter(3.0, 4.0)}, {2.0}, DType::F64, tol).ok);
  // 1 - 2^-52 keeps 2 - a exact (nextafter(1, 0) would round the difference back to 1.0).
  EXPECT_FALSE(compare(std::vector<double>{1.0 - std::ldexp(1.0, -52)}, {2.0}, DType::F64, tol).ok);
  // rtol scales with |expected|, also for negative values.
  EXPECT_TRUE(compare(std::vector<float>{-3.0f}, {-2.0f}, DType::F32, tol).ok);
  EXPECT_FALSE(compare(std::vector<float>{-3.0f}, {-2.0f}, DType::F32, {0.5, 0.0}).ok);
}

TEST(Checker, F32ReportsErrorsAndFirstMismatch) {
  const std::vector<float> expected = {1.0f, 2.0f, 4.0f, 8.0f};
  const std::vector<float> actual = {1.005f, 2.0f, 5.0f, 7.0f};
  const CompareResult r = compare(actual, expected, DType::F32, default_tolerance(DType::F32));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.n_mismatch, 2);
  EXPECT_EQ(r.first_bad_index, 2);
  EXPECT_EQ(r.actual_at_first_bad, 5.0);
  EXPECT_EQ(r.expected_at_first_bad, 4.0);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(r.max_rel_error, 0.25);
  EXPECT_EQ(r.n_nonfinite_actual, 0);
}

TEST(Checker, NanHandling) {
  const Tolerance tol{1e-2, 1e-2};
  // NaN where NaN is expected is right.
  CompareResult r = compare(std::vector<double>{nan_value, 1.0}, {nan_value, 1.0}, DType::F64, tol);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.n_nonfinite_actual, 0);  // an expected NaN is not the kernel's fault
  // NaN where a number is expected is wrong, and counted as non-finite output.
  r = compare(std::vector<double>{1.0, nan_value}, {1.0, 2.0}, DType::F64, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 1);
  EXPECT_TRUE(std::isnan(r.actual_at_first_bad));
  EXPECT_EQ(r.n_nonfinite_actual, 1);
  EXPECT_EQ(r.max_abs_error, 0);  // NaN pairs stay out of the error statistics
  // A number where NaN is expected is wrong too (a kernel that "fixes" NaNs is not the reference).
  r = compare(std::vector<double>{0.0}, {nan_value}, DType::F64, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.n_nonfinite_actual, 0);
  // A huge tolerance does not excuse NaN.
  EXPECT_FALSE(compare(std::vector<float>{NAN}, {0.0f}, DType::F32, {1e30, 1e30}).ok);
}

TEST(Checker, InfHandling) {
  const Tolerance tol{1e-2, 1e-2};
  const std::vector<double> both_infs = {inf_value, -inf_value};
  EXPECT_TRUE(compare(both_infs, both_infs, DType::F64, tol).ok);
  EXPECT_FALSE(compare(std::vector<double>{-inf_value}, {inf_value}, DType::F64, tol).ok);
  EXPECT_FALSE(compare(std::vector<double>{1e308}, {inf_value}, DType::F64, tol).ok);
  const CompareResult r = compare(std::vector<double>{inf_value}, {1e308}, DType::F64, {1e300, 1e300});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.n_nonfinite_actual, 1);
  // Same-sign inf in half precision, and an overflow to inf where a finite value is expected.
  EXPECT_TRUE(compare(std::vector<std::uint16_t>{0x7c00}, {0x7c00}, DType::F16, tol).ok);
  EXPECT_FALSE(compare(std::vector<std::uint16_t>{0x7c00}, {0x7bff}, DType::F16, tol).ok);
}

TEST(Checker, PoisonedOutputIsDetected) {
  // An output the kernel never wrote still holds the poison bytes.
  std::vector<float> expected(1000);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = 0.001f * static_cast<float>(i) - 0.3f;
  std::vector<float> actual(expected.size());
  std::memset(actual.data(), 0xAB, actual.size() * sizeof(float));
  std::memcpy(actual.data(), expected.data(), 500 * sizeof(float));  // wrote the first half only
  const CompareResult r = compare(actual, expected, DType::F32, default_tolerance(DType::F32));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 500);
  EXPECT_EQ(r.n_mismatch, 500);
  // 0xABABABAB reads as -1.2e-12: only an expected value within ~0.01 of zero would let it pass.
  EXPECT_NEAR(r.actual_at_first_bad, -1.2197e-12, 1e-15);
}

TEST(Checker, F16WithinAndBeyondTolerance) {
  const std::vector<float> expected = {1.0f, -2.0f, 100.0f, 0.0f};
  const std::vector<float> close = {1.0078125f, -2.015625f, 100.5f, 0.0078125f};
  const Tolerance tol = default_tolerance(DType::F16);
  CompareResult r = compare(to_f16(close), to_f16(expected), DType::F16, tol);
  EXPECT_TRUE(r.ok) << describe(r, "output 0", DType::F16);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0.5);

  std::vector<float> far = close;
  far[3] = 0.03125f;  // 0.03 > 0.01 + 0.01 * 0
  r = compare(to_f16(far), to_f16(expected), DType::F16, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 3);
  EXPECT_EQ(r.actual_at_first_bad, 0.03125);
}

TEST(Checker, Bf16UsesItsOwnDecoding) {
  const std::vector<float> expected = {1.0f, 256.0f, -3.0f};
  const std::vector<float> close = {1.0078125f, 260.0f, -3.0f};  // 4 <= 0.02 + 0.02 * 256
  const Tolerance tol = default_tolerance(DType::BF16);
  EXPECT_TRUE(compare(to_bf16(close), to_bf16(expected), DType::BF16, tol).ok);
  std::vector<float> far = close;
  far[1] = 264.0f;
  const CompareResult r = compare(to_bf16(far), to_bf16(expected), DType::BF16, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 1);
  EXPECT_EQ(r.actual_at_first_bad, 264.0);
  EXPECT_EQ(r.expected_at_first_bad, 256.0);
  // The same bits read as F16 would be different numbers: the dtype matters.
  EXPECT_NE(compare(to_bf16(far), to_bf16(expected), DType::F16, tol).first_bad_index, 1);
}

TEST(Checker, IntegersCompareExactly) {
  const Tolerance exact = default_tolerance(DType::I32);
  EXPECT_TRUE(compare(std::vector<std::int32_t>{-5, 0, 7}, {-5, 0, 7}, DType::I32, exact).ok);
  CompareResult r = compare(std::vector<std::int32_t>{-5, 1, 7}, {-5, 0, 7}, DType::I32, exact);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 1);
  EXPECT_EQ(r.actual_at_first_bad, 1);
  EXPECT_EQ(r.max_abs_error, 1);

  EXPECT_FALSE(compare(std::vector<std::int8_t>{127}, {-128}, DType::I8, exact).ok);
  EXPECT_FALSE(compare(std::vector<std::uint8_t>{255}, {0}, DType::U8, exact).ok);
  EXPECT_FALSE(compare(std::vector<std::int16_t>{-32768}, {32767}, DType::I16, exact).ok);
  r = compare(std::vector<std::uint8_t>{255}, {0}, DType::U8, exact);
  EXPECT_EQ(r.actual_at_first_bad, 255);  // unsigned, not -1

  // 2^60 and 2^60 + 1 are the same double; they must still differ.
  const std::int64_t big = std::int64_t{1} << 60;
  r = compare(std::vector<std::int64_t>{big + 1}, {big}, DType::I64, exact);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.max_abs_error, 1);
  EXPECT_FALSE(compare(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()},
                       {std::numeric_limits<std::int64_t>::max()}, DType::I64, exact).ok);
  // An explicit tolerance gives integers slack.
  EXPECT_TRUE(compare(std::vector<std::int32_t>{101}, {100}, DType::I32, {1, 0}).ok);
}

TEST(Checker, BoolNormalisesExpectedAndRejectsInvalidBytes) {
  const Tolerance tol = default_tolerance(DType::BOOL);
  // The reference may hold any non-zero byte for true.
  EXPECT_TRUE(compare(std::vector<std::uint8_t>{1, 0, 1}, {2, 0, 255}, DType::BOOL, tol).ok);
  EXPECT_FALSE(compare(std::vector<std::uint8_t>{0}, {1}, DType::BOOL, tol).ok);
  // An untouched (poisoned) output byte is not a valid bool even where true is expected.
  CompareResult r = compare(std::vector<std::uint8_t>{1, 0xAB}, {1, 1}, DType::BOOL, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_index, 1);
  EXPECT_EQ(r.actual_at_first_bad, 0xAB);
  EXPECT_EQ(r.expected_at_first_bad, 1);
  // Tolerance does not apply to bools.
  EXPECT_FALSE(compare(std::vector<std::uint8_t>{2}, {1}, DType::BOOL, {10, 10}).ok);
}

TEST(Checker, FirstBadIndexIsGlobalMinimumAcrossThreads) {
  const std::int64_t numel = 10'000'000;
  std::vector<float> expected(numel);
  for (std::int64_t i = 0; i < numel; ++i) expected[i] = static_cast<float>(i % 1000) * 0.5f;
  std::vector<float> actual = expected;
  // Errors in two different chunks for any worker count from 2 to 16; the later one is larger.
  actual[2'500'000] += 1.0f;
  actual[9'000'000] += 3.0f;
  actual[9'000'001] = NAN;

  const CompareResult single = compare_buffers(actual.data(), expected.data(), numel, DType::F32,
                                               default_tolerance(DType::F32), 1);
  EXPECT_EQ(single.first_bad_index, 2'500'000);
  EXPECT_EQ(single.n_mismatch, 3);
  EXPECT_EQ(single.n_checked, numel);
  EXPECT_EQ(single.n_nonfinite_actual, 1);
  EXPECT_EQ(single.actual_at_first_bad, expected[2'500'000] + 1.0);
  EXPECT_DOUBLE_EQ(single.max_abs_error, 3.0);
  for (unsigned n_threads : {0u, 2u, 3u, 7u, 8u, 16u, 64u}) {
    const CompareResult r = compare_buffers(actual.data(), expected.data(), numel, DType::F32,
                                            default_tolerance(DType::F32), n_threads);
    EXPECT_EQ(r.first_bad_index, single.first_bad_index) << n_threads;
    EXPECT_EQ(r.n_mismatch, single.n_mismatch) << n_threads;
    EXPECT_EQ(r.n_checked, numel) << n_threads;
    EXPECT_EQ(r.n_nonfinite_actual, 1) << n_threads;
    EXPECT_EQ(r.actual_at_first_bad, single.actual_at_first_bad) << n_threads;
    EXPECT_EQ(r.expected_at_first_bad, single.expected_at_first_bad) << n_threads;
    EXPECT_EQ(r.max_abs_error, single.max_abs_error) << n_threads;
    EXPECT_EQ(r.max_rel_error, single.max_rel_error) << n_threads;
  }
}

TEST(Checker, OnlyLateChunkBadStillFound) {
  const std::int64_t numel = 4'000'000;
  std::vector<std::int32_t> expected(numel, 7);
  std::vector<std::int32_t> actual = expected;
  actual[numel - 1] = 8;
  const CompareResult r = compare_buffers(actual.data(), expected.data(), numel, DType::I32, {0, 0}, 8);
  EXPECT_EQ(r.first_bad_index, numel - 1);
  EXPECT_EQ(r.n_mismatch, 1);
}

TEST(Checker, DescribeMatchesTheModelFacingFormat) {
  CompareResult r;
  r.ok = false;
  r.n_checked = 1048576;
  r.n_mismatch = 37;
  r.first_bad_index = 1023;
  r.max_abs_error = 0.51;
  r.max_rel_error = 2.1;
  r.actual_at_first_bad = 0.0;
  r.expected_at_first_bad = 0.51;
  EXPECT_EQ(describe(r, "output 0", DType::F32),
            "output 0: 37 of 1048576 elements differ (max abs err 0.51, max rel err 2.1); "
            "first at index 1023 (flat): got 0.0, expected 0.51");
  r.first_bad_index = 2047;
  EXPECT_EQ(describe(r, "output 0", DType::F32, {1024, 1024}),
            "output 0: 37 of 1048576 elements differ (max abs err 0.51, max rel err 2.1); "
            "first at index [1, 1023] (flat 2047): got 0.0, expected 0.51");
}

TEST(Checker, DescribeFromRealComparisons) {
  const std::vector<float> expected = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  std::vector<float> actual = expected;
  EXPECT_EQ(describe(compare(actual, expected, DType::F32, {0, 0}), "output 1", DType::F32),
            "output 1: all 6 elements match (max abs err 0, max rel err 0)");

  actual[4] = NAN;
  EXPECT_EQ(describe(compare(actual, expected, DType::F32, {0, 0}), "output 0", DType::F32, {2, 3}),
            "output 0: 1 of 6 elements differ; first at index [1, 1] (flat 4): got nan, expected 5.0; "
            "1 NaN/inf where a finite value was expected");

  const CompareResult b = compare(std::vector<std::uint8_t>{1, 0xAB}, {1, 1}, DType::BOOL, {0, 0});
  EXPECT_EQ(describe(b, "output 0", DType::BOOL),
            "output 0: 1 of 2 elements differ; first at index 1 (flat): got byte 0xab (not a bool: 0 or 1), "
            "expected 1");

  const CompareResult i = compare(std::vector<std::int64_t>{3, -9}, {3, 10}, DType::I64, {0, 0});
  EXPECT_EQ(describe(i, "output 2", DType::I64),
            "output 2: 1 of 2 elements differ (max abs err 19, max rel err 1.9); first at index 1 (flat): "
            "got -9, expected 10");
  EXPECT_EQ(describe(CompareResult{}, "output 0", DType::F32), "output 0: empty, nothing to compare");
}

TEST(Checker, Unravel) {
  EXPECT_EQ(unravel(23, {2, 3, 4}), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(unravel(0, {2, 3, 4}), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(unravel(5, {4, 1, 2}), (std::vector<std::int64_t>{2, 0, 1}));
  EXPECT_EQ(unravel(7, {10}), (std::vector<std::int64_t>{7}));
  EXPECT_TRUE(unravel(24, {2, 3, 4}).empty());
  EXPECT_TRUE(unravel(-1, {2, 3, 4}).empty());
  EXPECT_TRUE(unravel(0, {}).empty());
  EXPECT_TRUE(unravel(0, {2, 0}).empty());
}

}  // namespace
}  // namespace kernelrl::eval
