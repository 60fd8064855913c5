// summarize: medians and percentiles by linear interpolation (numpy's default), spread measures.
#include "eval/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kernelrl::eval {
namespace {

TEST(Stats, EmptyGivesZeros) {
  const SampleStats s = summarize({});
  EXPECT_EQ(s.n, 0);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.stdev, 0);
  EXPECT_EQ(s.p10, 0);
  EXPECT_EQ(s.p90, 0);
  EXPECT_EQ(s.iqr_rel, 0);
}

TEST(Stats, SingleSample) {
  const SampleStats s = summarize({4.5});
  EXPECT_EQ(s.n, 1);
  EXPECT_EQ(s.median, 4.5);
  EXPECT_EQ(s.p10, 4.5);
  EXPECT_EQ(s.p90, 4.5);
  EXPECT_EQ(s.stdev, 0);
  EXPECT_EQ(s.iqr_rel, 0);
}

TEST(Stats, MedianOddCountIsTheMiddleSample) {
  const SampleStats s = summarize({9.0, 1.0, 5.0});  // unsorted on purpose
  EXPECT_EQ(s.median, 5.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 9.0);
}

TEST(Stats, MedianEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(summarize({4.0, 1.0, 3.0, 2.0}).median, 2.5);
  EXPECT_EQ(summarize({10.0, 20.0}).median, 15.0);
}

TEST(Stats, PercentilesInterpolateLinearly) {
  std::vector<double> samples;
  for (int i = 11; i >= 1; --i) samples.push_back(i);  // 1..11
  const SampleStats s = summarize(samples);
  EXPECT_EQ(s.n, 11);
  EXPECT_DOUBLE_EQ(s.p10, 2.0);   // position 1.0
  EXPECT_DOUBLE_EQ(s.p90, 10.0);  // position 9.0
  EXPECT_DOUBLE_EQ(s.median, 6.0);
  EXPECT_DOUBLE_EQ(s.iqr_rel, (8.5 - 3.5) / 6.0);  // p25 at 2.5, p75 at 7.5

  // numpy.percentile([1, 2, 3, 4], [10, 90]) == [1.3, 3.7]
  const SampleStats t = summarize({4.0, 3.0, 2.0, 1.0});
  EXPECT_DOUBLE_EQ(t.p10, 1.3);
  EXPECT_DOUBLE_EQ(t.p90, 3.7);
  EXPECT_DOUBLE_EQ(quantile_sorted({1.0, 2.0, 3.0, 4.0}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_sorted({1.0, 2.0, 3.0, 4.0}, 1.0), 4.0);
  EXPECT_EQ(quantile_sorted({}, 0.5), 0);
}

TEST(Stats, MeanAndSampleStdev) {
  const SampleStats s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(32.0 / 7.0));  // n - 1 in the denominator
}

TEST(Stats, OutlierMovesMeanNotMedian) {
  const SampleStats s = summarize({10, 10, 10, 10, 1000});
  EXPECT_EQ(s.median, 10);
  EXPECT_EQ(s.mean, 208);
  EXPECT_EQ(s.iqr_rel, 0);
}

TEST(Stats, ZeroMedianGivesZeroIqrRel) {
  EXPECT_EQ(summarize({-1, 0, 1}).iqr_rel, 0);
}

}  // namespace
}  // namespace kernelrl::eval
