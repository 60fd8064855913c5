// Scores, returns and advantages against numbers computed by hand.
#include "rl/rewards.hpp"

#include <gtest/gtest.h>

namespace kernelrl::rl {
namespace {

TEST(Score, CorrectKernelsEarnTheBonusPlusTheSpeedup) {
  EXPECT_DOUBLE_EQ(score(true, 1.5), 1.8);
  EXPECT_DOUBLE_EQ(score(false, 3.0), 0.0);
  EXPECT_DOUBLE_EQ(score(true, 0.0), 0.3);  // correct but timing off still earns w_correct
  ScoreConfig capped;
  capped.speedup_cap = 2.0;
  EXPECT_DOUBLE_EQ(score(true, 5.0, capped), 2.3);
  EXPECT_DOUBLE_EQ(score(true, 1.2, capped), 1.5);
  ScoreConfig heavier{1.0, std::nullopt};
  EXPECT_DOUBLE_EQ(score(true, 0.5, heavier), 1.5);
}

TEST(Returns, DiscountedSumWithGammaPoint4) {
  auto R = returns({0.0, 1.8, 0.0, 2.3});
  ASSERT_EQ(R.size(), 4u);
  EXPECT_DOUBLE_EQ(R[3], 2.3);
  EXPECT_DOUBLE_EQ(R[2], 0.92);
  EXPECT_DOUBLE_EQ(R[1], 2.168);
  EXPECT_DOUBLE_EQ(R[0], 0.8672);
}

TEST(Returns, DiscountedMaxKeepsTheBestDiscountedLaterScore) {
  auto R = returns({0.0, 1.8, 0.0, 2.3}, {ReturnKind::DISCOUNTED_MAX, 0.4});
  EXPECT_DOUBLE_EQ(R[3], 2.3);
  EXPECT_DOUBLE_EQ(R[2], 0.92);
  EXPECT_DOUBLE_EQ(R[1], 1.8);
  EXPECT_DOUBLE_EQ(R[0], 0.72);
  EXPECT_TRUE(returns({}).empty());
}

TEST(Advantages, GrpoOverAllSamplesOfTheTask) {
  auto A = advantages({{1, 3}, {2, 6}});
  const double std = 2.1602468994692865;  // sample std of {1, 3, 2, 6}
  EXPECT_NEAR(A[0][0], -2 / (std + 1e-6), 1e-12);
  EXPECT_NEAR(A[0][1], 0.0, 1e-12);
  EXPECT_NEAR(A[1][0], -1 / (std + 1e-6), 1e-12);
  EXPECT_NEAR(A[1][1], 3 / (std + 1e-6), 1e-12);
}

TEST(Advantages, GrpoPerTurnNormalisesWithinEachTurn) {
  AdvantageConfig c;
  c.kind = AdvantageKind::GRPO_PER_TURN;
  auto A = advantages({{1, 3}, {2, 6}}, c);
  EXPECT_NEAR(A[0][0], -0.5 / (0.7071067811865476 + 1e-6), 1e-12);
  EXPECT_NEAR(A[1][0], 0.5 / (0.7071067811865476 + 1e-6), 1e-12);
  EXPECT_NEAR(A[0][1], -1.5 / (2.1213203435596424 + 1e-6), 1e-12);
  EXPECT_NEAR(A[1][1], 1.5 / (2.1213203435596424 + 1e-6), 1e-12);
}

TEST(Advantages, LeaveOneOutSubtractsTheOthersMean) {
  AdvantageConfig c;
  c.kind = AdvantageKind::LEAVE_ONE_OUT_TURN;
  auto A = advantages({{1}, {2}, {6}}, c);
  EXPECT_DOUBLE_EQ(A[0][0], 1 - (2 + 6) / 2.0);
  EXPECT_DOUBLE_EQ(A[1][0], 2 - (1 + 6) / 2.0);
  EXPECT_DOUBLE_EQ(A[2][0], 6 - (1 + 2) / 2.0);
}

TEST(Advantages, WithoutStdOnlyTheMeanIsRemoved) {
  AdvantageConfig c;
  c.divide_by_std = false;
  auto A = advantages({{1, 3}, {2, 6}}, c);
  EXPECT_DOUBLE_EQ(A[0][0], -2);
  EXPECT_DOUBLE_EQ(A[1][1], 3);
}

TEST(Advantages, RaggedTrajectoriesAndLoneSamplesGetZero) {
  AdvantageConfig c;
  c.kind = AdvantageKind::GRPO_PER_TURN;
  auto A = advantages({{1, 2}, {3}}, c);
  ASSERT_EQ(A[0].size(), 2u);
  ASSERT_EQ(A[1].size(), 1u);
  EXPECT_DOUBLE_EQ(A[0][1], 0.0);  // turn 1 has a single sample
  EXPECT_LT(A[0][0], 0);
  EXPECT_GT(A[1][0], 0);
  EXPECT_DOUBLE_EQ(advantages({{5}})[0][0], 0.0);
  auto equal = advantages({{2, 2}, {2, 2}});
  EXPECT_DOUBLE_EQ(equal[1][1], 0.0);  // identical returns: no signal, no division by zero
}

TEST(Advantages, MissingReturnsAreInNoGroup) {
  for (auto kind : {AdvantageKind::GRPO_TASK, AdvantageKind::GRPO_PER_TURN, AdvantageKind::LEAVE_ONE_OUT_TURN}) {
    AdvantageConfig c;
    c.kind = kind;
    const auto A = advantages_where_present({{1.0, std::nullopt}, {3.0, 6.0}, {std::nullopt, 2.0}}, c);
    EXPECT_FALSE(A[0][1].has_value());
    EXPECT_FALSE(A[2][0].has_value());
    // The same as the groups formed from the present returns alone.
    const auto expected = kind == AdvantageKind::GRPO_TASK ? advantages({{1.0, 3.0, 6.0, 2.0}}, c)
                                                           : advantages({{1.0, 6.0}, {3.0, 2.0}}, c);
    if (kind == AdvantageKind::GRPO_TASK) {
      EXPECT_DOUBLE_EQ(*A[0][0], expected[0][0]);
      EXPECT_DOUBLE_EQ(*A[1][0], expected[0][1]);
      EXPECT_DOUBLE_EQ(*A[1][1], expected[0][2]);
      EXPECT_DOUBLE_EQ(*A[2][1], expected[0][3]);
    } else {  // turn 1: returns 1 and 3; turn 2: returns 6 and 2
      EXPECT_DOUBLE_EQ(*A[0][0], expected[0][0]);
      EXPECT_DOUBLE_EQ(*A[1][0], expected[1][0]);
      EXPECT_DOUBLE_EQ(*A[1][1], expected[0][1]);
      EXPECT_DOUBLE_EQ(*A[2][1], expected[1][1]);
    }
  }
}

TEST(Kinds, NamesRoundTripAndBadNamesAreNamed) {
  for (auto k : {AdvantageKind::GRPO_TASK, AdvantageKind::GRPO_PER_TURN, AdvantageKind::LEAVE_ONE_OUT_TURN}) {
    EXPECT_EQ(*parse_advantage_kind(to_string(k)), k);
  }
  EXPECT_EQ(*parse_return_kind("discounted_max"), ReturnKind::DISCOUNTED_MAX);
  auto bad = parse_return_kind("sum");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'sum'"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::rl
