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

TEST(RolloutCredit, ChainsGetRlReturnsAndAdvantages) {
  const std::vector<std::vector<double>> scores = {{0, 0.3, 1.7}, {0, 0, 0}, {1.2, 0, 2.5}};
  for (auto kind : {rl::ReturnKind::DISCOUNTED_SUM, rl::ReturnKind::DISCOUNTED_MAX}) {
    rl::ReturnConfig returns{kind, 0.4};
    rl::AdvantageConfig advantage{rl::AdvantageKind::GRPO_PER_TURN};
    TaskCredit c = assign_credit(chains(scores), returns, advantage);
    std::vector<std::vector<double>> expected_R;
    for (const auto& s : scores) expected_R.push_back(rl::returns(s, returns));
    EXPECT_EQ(c.returns, expected_R);
    EXPECT_EQ(c.advantages, rl::advantages(expected_R, advantage));
  }
}

TEST(RolloutCredit, BeamTurnsAverageThePathsThroughThem) {
  // Turn 1: trajectories 0 and 1; both turn-2 turns continue trajectory 1's turn 1.
  TaskTurns t;
  t.scores = {{0.0, 1.0}, {2.0, 3.0}};
  t.from = {{std::nullopt, TurnRef{1, 1}}, {std::nullopt, TurnRef{1, 1}}};
  rl::ReturnConfig returns{rl::ReturnKind::DISCOUNTED_SUM, 0.5};
  TaskCredit c = assign_credit(t, returns, {});
  EXPECT_DOUBLE_EQ(c.returns[0][0], 0.0);                           // dropped by the beam: a leaf
  EXPECT_DOUBLE_EQ(c.returns[1][0], 2.0 + 0.5 * (1.0 + 3.0) / 2);   // mean over its two branches
  EXPECT_DOUBLE_EQ(c.returns[0][1], 1.0);
  EXPECT_DOUBLE_EQ(c.returns[1][1], 3.0);
  EXPECT_EQ(c.advantages, rl::advantages(c.returns, {}));
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
