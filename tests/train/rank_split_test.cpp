// The places of a rank's samples in a data-parallel step's whole batch: the order one process
// would sort all samples into, whichever rank holds them.
#include <gtest/gtest.h>

#include <algorithm>

#include "train/rank_split.hpp"

namespace kernelrl::train {
namespace {

std::vector<SampleKey> keys_of(const std::string& task, int n_trajectories, int n_turns) {
  std::vector<SampleKey> out;
  for (int t = 0; t < n_trajectories; ++t) {
    for (int k = 1; k <= n_turns; ++k) out.push_back({task, t, k});
  }
  return out;
}

TEST(RankSplit, OneRankKeepsItsOrder) {
  auto p = place_samples({keys_of("a.py", 2, 3)}, 0);
  EXPECT_EQ(p.n_samples, 6u);
  EXPECT_EQ(p.position, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
}

// Rank 0 holds the tasks the step listed first (c.py, a.py), rank 1 the last (b.py): the whole
// batch is ordered by task file, so rank 1's samples sit between rank 0's two groups.
TEST(RankSplit, RanksInterleaveByTask) {
  std::vector<SampleKey> rank0 = keys_of("c.py", 1, 2);
  auto a = keys_of("a.py", 1, 2);
  rank0.insert(rank0.end(), a.begin(), a.end());
  std::sort(rank0.begin(), rank0.end());  // as the trainer sorts its own
  const std::vector<std::vector<SampleKey>> all = {rank0, keys_of("b.py", 2, 1)};
  auto p0 = place_samples(all, 0);
  auto p1 = place_samples(all, 1);
  EXPECT_EQ(p0.n_samples, 6u);
  EXPECT_EQ(p1.n_samples, 6u);
  EXPECT_EQ(p0.position, (std::vector<std::size_t>{0, 1, 4, 5}));  // a.py turns 1-2, then c.py's
  EXPECT_EQ(p1.position, (std::vector<std::size_t>{2, 3}));        // b.py's two trajectories
}

TEST(RankSplit, PlacesCoverTheBatchOnceWithEmptyRanks) {
  const std::vector<std::vector<SampleKey>> all = {keys_of("x.py", 3, 2), {}, keys_of("m.py", 1, 3), {}};
  std::vector<std::size_t> seen;
  for (int r = 0; r < 4; ++r) {
    auto p = place_samples(all, r);
    EXPECT_EQ(p.n_samples, 9u);
    EXPECT_EQ(p.position.size(), all[r].size());
    seen.insert(seen.end(), p.position.begin(), p.position.end());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(RankSplit, KeysSurviveTheirTextForm) {
  const auto keys = keys_of("tasks/level1/003_softmax.py", 2, 2);
  auto back = keys_from_text(keys_to_text(keys));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_FALSE(keys[i] < (*back)[i] || (*back)[i] < keys[i]) << i;
  }
  EXPECT_FALSE(keys_from_text("{\"not\": \"an array\"}"));
  EXPECT_FALSE(keys_from_text("[[\"a.py\", 1]]"));
}

TEST(RankSplit, SharesPartitionTheGroups) {
  EXPECT_EQ(rank_share(3, {0, 2}).size(), 2u);
  EXPECT_EQ(rank_share(3, {1, 2}).begin, 2u);
  EXPECT_EQ(rank_share(1, {1, 2}).size(), 0u);  // more ranks than groups: a rank may have none
}

}  // namespace
}  // namespace kernelrl::train
