// Rollout tasks and configuration: the manifest's split filters tasks, ids must be unique, and
// the strategy fixes the shape (parallel m x 1, serial 1 x n, beam width dividing m).
#include "rollout/task_set.hpp"

#include <gtest/gtest.h>

#include "rollout/rollout_config.hpp"
#include "rollout_test_util.hpp"

namespace kernelrl::rollout {
namespace {

TEST(RolloutTasks, SplitComesFromTheManifest) {
  auto all = load_tasks({testing::source_path("tasks/level1")}, "all");
  auto test = load_tasks({testing::source_path("tasks/level1")}, "test");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_TRUE(test) << test.error().message;
  EXPECT_GT(test->size(), 0u);
  EXPECT_LT(test->size(), all->size());
  for (const auto& t : *test) {
    EXPECT_EQ(t.split, "test") << t.path;
    EXPECT_EQ(t.level, 1) << t.path;
    EXPECT_NE(t.source.find("class Model"), std::string::npos) << t.path;
  }
}

TEST(RolloutTasks, ATaskWithoutManifestHasNoSplitAndOnlyAllKeepsIt) {
  auto all = load_tasks({testing::source_path(testing::kTask)}, "all");
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, "task_softmax_small");
  EXPECT_FALSE((*all)[0].split);
  auto train = load_tasks({testing::source_path(testing::kTask)}, "train");
  ASSERT_FALSE(train);
  EXPECT_NE(train.error().message.find("no tasks"), std::string::npos);
}

TEST(RolloutTasks, TwoTasksWithOneIdAreRefused) {
  auto dir = testing::scratch_dir();
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  std::filesystem::copy_file(testing::source_path(testing::kTask), dir / "a" / "softmax.py");
  std::filesystem::copy_file(testing::source_path(testing::kTask), dir / "b" / "softmax.py");
  auto r = load_tasks({dir}, "all");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'softmax'"), std::string::npos) << r.error().message;
}

TEST(RolloutConfigShape, StrategiesFixTheShape) {
  RolloutConfig c;
  c.tasks = {"t.py"};
  c.out_dir = "run";
  c.n_trajectories = 8;
  c.n_turns = 4;
  c.strategy = Strategy::PARALLEL;
  EXPECT_EQ(resolve(c)->n_turns, 1);
  c.strategy = Strategy::SERIAL;
  EXPECT_EQ(resolve(c)->n_trajectories, 1);
  c.strategy = Strategy::BEAM;
  c.beam_width = 3;
  auto bad = resolve(c);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("beam width 3"), std::string::npos) << bad.error().message;
  c.beam_width = 2;
  EXPECT_TRUE(resolve(c));
  EXPECT_FALSE(parse_strategy("greedy"));
}

}  // namespace
}  // namespace kernelrl::rollout
