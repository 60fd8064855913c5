// pass@k, expected best of k and the geometric mean against binomials and brute force.
#include "metrics/estimators.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kernelrl::metrics {
namespace {

TEST(metrics_pass_at_k, MatchesOneMinusTheBinomialRatio) {
  EXPECT_DOUBLE_EQ(pass_at_k(4, 3, 1), 0.75);
  EXPECT_NEAR(pass_at_k(4, 2, 2), 1.0 - 1.0 / 6.0, 1e-15);  // 1 - C(2,2)/C(4,2)
  EXPECT_NEAR(pass_at_k(4, 1, 2), 0.5, 1e-15);              // 1 - C(3,2)/C(4,2)
  EXPECT_NEAR(pass_at_k(10, 3, 4), 1.0 - 35.0 / 210.0, 1e-15);
}

TEST(metrics_pass_at_k, EdgeCases) {
  EXPECT_DOUBLE_EQ(pass_at_k(8, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(8, 8, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(4, 1, 4), 1.0);  // n - c < k: every subset holds the correct one
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
}

TEST(metrics_pass_at_k, StaysFiniteWhereBinomialsOverflow) {
  EXPECT_NEAR(pass_at_k(2000, 1, 1), 1.0 / 2000, 1e-15);
  EXPECT_NEAR(pass_at_k(1000, 10, 500), 0.9990668121978155, 1e-12);  // C(1000, 500) ~ 1e299
}

TEST(metrics_expected_max_of_k, OrderStatisticWeights) {
  // sorted {0, 1, 2, 3}, k = 2: (1*1 + 2*2 + 3*3) / C(4,2)
  EXPECT_NEAR(expected_max_of_k({3, 0, 2, 1}, 2), 14.0 / 6.0, 1e-15);
  EXPECT_NEAR(expected_max_of_k({3, 0, 2, 1}, 1), 1.5, 1e-15);  // k = 1 is the mean
  EXPECT_DOUBLE_EQ(expected_max_of_k({3, 0, 2, 1}, 4), 3.0);    // k = n is the max
  EXPECT_DOUBLE_EQ(expected_max_of_k({0, 0, 0}, 2), 0.0);
}

TEST(metrics_expected_max_of_k, AgreesWithEnumeratingEverySubset) {
  // mean of max over all 35 3-subsets, enumerated by hand in Python
  EXPECT_NEAR(expected_max_of_k({0.5, 2.0, 0.0, 1.25, 3.5, 0.75, 1.0}, 3), 2.392857142857143, 1e-12);
}

TEST(metrics_geometric_mean, OfPositiveValues) {
  EXPECT_NEAR(*geometric_mean({3.0, 1.2}), std::sqrt(3.6), 1e-12);
  EXPECT_NEAR(*geometric_mean({2.0, 8.0, 4.0}), 4.0, 1e-12);
  EXPECT_FALSE(geometric_mean({}).has_value());
  EXPECT_DOUBLE_EQ(mean({}), 0.0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 6}), 3.0);
}

TEST(metrics_ks_up_to, KeepsTheKsThatFit) {
  const std::vector<int> ks{1, 2, 4, 8, 16};
  EXPECT_EQ(ks_up_to(4, ks), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(ks_up_to(3, ks), (std::vector<int>{1, 2}));
  EXPECT_EQ(ks_up_to(16, ks), ks);
  EXPECT_EQ(ks_up_to(100, ks), ks);
  EXPECT_EQ(ks_up_to(1, ks), (std::vector<int>{1}));
}

}  // namespace
}  // namespace kernelrl::metrics
