// trajectories.jsonl as the rollout keeps it: a line cut off by a kill is removed (or finished
// when it is whole JSON), a bad line before the end is an error, appends from many threads stay
// whole lines.
#include "rollout/trajectory_log.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "rollout_test_util.hpp"

namespace kernelrl::rollout {
namespace {

using testing::read_text;
using testing::write_text;

TEST(RolloutLog, MissingFileHoldsNoRecords) {
  auto log = load_and_repair(testing::scratch_dir() / "trajectories.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_TRUE(log->records.empty());
}

TEST(RolloutLog, CutsOffAPartialLastLine) {
  auto file = testing::scratch_dir() / "trajectories.jsonl";
  write_text(file, "{\"a\":1}\n{\"a\":2}\n{\"a\":3,\"co");
  auto log = load_and_repair(file);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->records.size(), 2u);
  EXPECT_TRUE(log->dropped_partial_line);
  EXPECT_EQ(read_text(file), "{\"a\":1}\n{\"a\":2}\n");
}

TEST(RolloutLog, FinishesAWholeLastLineThatLostItsNewline) {
  auto file = testing::scratch_dir() / "trajectories.jsonl";
  write_text(file, "{\"a\":1}\n{\"a\":2}");
  auto log = load_and_repair(file);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->records.size(), 2u);
  EXPECT_FALSE(log->dropped_partial_line);
  EXPECT_EQ(read_text(file), "{\"a\":1}\n{\"a\":2}\n");
}

TEST(RolloutLog, ABadLineBeforeTheEndIsAnErrorNamingIt) {
  auto file = testing::scratch_dir() / "trajectories.jsonl";
  write_text(file, "{\"a\":1}\n{oops\n{\"a\":3}\n");
  auto log = load_and_repair(file);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find(file.string() + ":2"), std::string::npos) << log.error().message;
}

TEST(RolloutLog, AppendsFromManyThreadsAreWholeLines) {
  auto file = testing::scratch_dir() / "trajectories.jsonl";
  auto log = TrajectoryLog::open(file);
  ASSERT_TRUE(log) << log.error().message;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) ASSERT_TRUE((*log)->append({{"thread", t}, {"i", i}, {"pad", std::string(3000, 'x')}}));
    });
  }
  for (auto& t : threads) t.join();
  auto lines = testing::read_json_lines(file);
  EXPECT_EQ(lines.size(), 200u);
}

}  // namespace
}  // namespace kernelrl::rollout
