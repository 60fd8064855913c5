// Credit of a task's turns: chains give exactly rl::returns and rl::advantages; a beam's tree
// averages the returns of the paths through a turn; the beam keeps the best and branches them.
#include "rollout/credit.hpp"

#include <gtest/gtest.h>

namespace kernelrl::rollout {
namespace {

TaskTurns chains(const std::vector<std::vector<double>>& scores) {
  TaskTurns t;
  t.scores = scores;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    t.from.emplace_back();
    for (std::size_t k = 0; k < scores[j].size(); ++k)
      t.from.back().push_back(continues_from({static_cast<int>(j), static_cast<int>(k + 1)}, std::nullopt));
  }
  return t;
}

// Every value of `values`, which must all be present.
std::vector<std::vector<double>> all_present(const std::vector<std::vector<std::optional<double>>>& values) {
  std::vector<std::vector<double>> out;
  for (const auto& row : values) {
    out.emplace_back();
    for (const auto& v : row) {
      EXPECT_TRUE(v.has_value());
      out.back().push_back(v.value_or(-1e300));
    }
  }
  return out;
}

TEST(RolloutCredit, ChainsGetRlReturnsAndAdvantages) {
  const std::vector<std::vector<double>> scores = {{0, 0.3, 1.7}, {0, 0, 0}, {1.2, 0, 2.5}};
  for (auto kind : {rl::ReturnKind::DISCOUNTED_SUM, rl::ReturnKind::DISCOUNTED_MAX}) {
    rl::ReturnConfig returns{kind, 0.4};
    rl::AdvantageConfig advantage{rl::AdvantageKind::GRPO_PER_TURN};
    TaskCredit c = assign_credit(chains(scores), returns, advantage);
    std::vector<std::vector<double>> expected_R;
    for (const auto& s : scores) expected_R.push_back(rl::returns(s, returns));
    EXPECT_EQ(all_present(c.returns), expected_R);
    EXPECT_EQ(all_present(c.advantages), rl::advantages(expected_R, advantage));
  }
}

TEST(RolloutCredit, BeamTurnsAverageThePathsThroughThem) {
  // Turn 1: trajectories 0 and 1; both turn-2 turns continue trajectory 1's turn 1.
  TaskTurns t;
  t.scores = {{0.0, 1.0}, {2.0, 3.0}};
  t.from = {{std::nullopt, TurnRef{1, 1}}, {std::nullopt, TurnRef{1, 1}}};
  rl::ReturnConfig returns{rl::ReturnKind::DISCOUNTED_SUM, 0.5};
  TaskCredit c = assign_credit(t, returns, {});
  const auto R = all_present(c.returns);
  EXPECT_DOUBLE_EQ(R[0][0], 0.0);                           // dropped by the beam: a leaf
  EXPECT_DOUBLE_EQ(R[1][0], 2.0 + 0.5 * (1.0 + 3.0) / 2);   // mean over its two branches
  EXPECT_DOUBLE_EQ(R[0][1], 1.0);
  EXPECT_DOUBLE_EQ(R[1][1], 3.0);
  EXPECT_EQ(all_present(c.advantages), rl::advantages(R, {}));
}

// A turn the policy was never asked (its prompt did not fit) is not the model's outcome: it gets
// no return and no advantage, adds nothing to earlier turns' returns, and is in no group.
TEST(RolloutCredit, UnansweredTurnsAreLeftOutOfReturnsAndGroups) {
  TaskTurns t = chains({{1.0, 0.0, 2.0}, {0.5, 0.0, 0.0}});
  t.unanswered = {{false, true, false}, {false, false, true}};
  for (auto kind : {rl::ReturnKind::DISCOUNTED_SUM, rl::ReturnKind::DISCOUNTED_MAX}) {
    const rl::ReturnConfig returns{kind, 0.5};
    const TaskCredit c = assign_credit(t, returns, {});
    EXPECT_FALSE(c.returns[0][1].has_value());
    EXPECT_FALSE(c.advantages[0][1].has_value());
    EXPECT_FALSE(c.returns[1][2].has_value());
    EXPECT_FALSE(c.advantages[1][2].has_value());
    // Trajectory 0 is the answered turns 1 and 3, one step apart; trajectory 1 its turns 1 and 2.
    const auto r0 = rl::returns({1.0, 2.0}, returns), r1 = rl::returns({0.5, 0.0}, returns);
    EXPECT_DOUBLE_EQ(*c.returns[0][0], r0[0]);
    EXPECT_DOUBLE_EQ(*c.returns[0][2], r0[1]);
    EXPECT_DOUBLE_EQ(*c.returns[1][0], r1[0]);
    EXPECT_DOUBLE_EQ(*c.returns[1][1], r1[1]);
    // The group is the four answered turns.
    const auto A = rl::advantages({{r0[0], r0[1], r1[0], r1[1]}});
    EXPECT_DOUBLE_EQ(*c.advantages[0][0], A[0][0]);
    EXPECT_DOUBLE_EQ(*c.advantages[0][2], A[0][1]);
    EXPECT_DOUBLE_EQ(*c.advantages[1][0], A[0][2]);
    EXPECT_DOUBLE_EQ(*c.advantages[1][1], A[0][3]);
  }
}

TEST(RolloutCredit, BeamKeepsTheBestAndBranchesEachIntoEqualCopies) {
  EXPECT_EQ(select_beam({0.0, 1.5, 0.0, 2.0}, 2), (std::vector<int>{3, 1}));
  EXPECT_EQ(select_beam({1.0, 1.0, 1.0, 1.0}, 2), (std::vector<int>{0, 1}));  // ties: lower index
  const std::vector<int> kept{3, 1};
  EXPECT_EQ(beam_parent(kept, 4, 0), 3);
  EXPECT_EQ(beam_parent(kept, 4, 1), 3);
  EXPECT_EQ(beam_parent(kept, 4, 2), 1);
  EXPECT_EQ(beam_parent(kept, 4, 3), 1);
}

}  // namespace
}  // namespace kernelrl::rollout
