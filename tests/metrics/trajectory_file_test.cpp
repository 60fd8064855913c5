// Reading trajectories.jsonl: updates applied, a truncated last line forgiven, every other fault
// an Error naming file and line.
#include "metrics/trajectory_file.hpp"

#include <gtest/gtest.h>

#include "metrics_test_util.hpp"

namespace kernelrl::metrics {
namespace {

using testing::data_file;
using testing::scratch_dir;
using testing::turn_line;
using testing::write_file;

const TurnRecord* find(const TrajectoryFile& file, const std::string& task_id, int trajectory, int turn) {
  for (const auto& r : file.records) {
    if (r.task_id == task_id && r.trajectory == trajectory && r.turn == turn) return &r;
  }
  return nullptr;
}

TEST(metrics_trajectory_file, ReadsTheHandMadeRun) {
  auto file = read_trajectory_file(data_file());
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->records.size(), 24u);
  const TurnRecord* r = find(*file, "001_relu", 3, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->task, "tasks/level1/001_relu.py");
  EXPECT_EQ(r->level, 1);
  EXPECT_EQ(r->split, "train");
  EXPECT_TRUE(r->correct);
  EXPECT_EQ(r->speedup, 3.0);
  const TurnRecord* conv = find(*file, "003_conv", 2, 2);
  ASSERT_NE(conv, nullptr);
  EXPECT_FALSE(conv->level.has_value());
  EXPECT_TRUE(conv->correct);
  EXPECT_FALSE(conv->speedup.has_value());
}

TEST(metrics_trajectory_file, AppliesUpdateRecords) {
  auto file = read_trajectory_file(data_file());
  ASSERT_TRUE(file) << file.error().message;
  const TurnRecord* updated = find(*file, "001_relu", 0, 1);
  ASSERT_NE(updated, nullptr);
  EXPECT_EQ(updated->return_, 0.92);
  EXPECT_EQ(updated->advantage, -0.25);
  EXPECT_FALSE(updated->correct);  // an update touches only return and advantage
  EXPECT_FALSE(find(*file, "001_relu", 0, 2)->return_.has_value());
}

TEST(metrics_trajectory_file, IgnoresATruncatedLastLineWithAWarning) {
  auto file = read_trajectory_file(data_file());
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_NE(file->warnings[0].find("trajectories.jsonl:26"), std::string::npos) << file->warnings[0];
  EXPECT_EQ(find(*file, "003_conv", 4, 1), nullptr);
}

TEST(metrics_trajectory_file, BadJsonBeforeTheLastLineNamesFileAndLine) {
  auto path = write_file(scratch_dir() / "t.jsonl",
                         turn_line("a.py", 0, 1, true, "1.5") + "\n{\"task\": \n" + turn_line("a.py", 1, 1, false, "null") + "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(path.string() + ":2"), std::string::npos) << file.error().message;
}

TEST(metrics_trajectory_file, MissingFieldsAreNamed) {
  auto path = write_file(scratch_dir() / "t.jsonl", R"({"task": "a.py", "trajectory": 0, "turn": 1})" "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(":1: missing field `correct`"), std::string::npos) << file.error().message;
  path = write_file(path, R"({"task": "a.py", "trajectory": "zero", "turn": 1, "correct": true})" "\n");
  file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("`trajectory` is not an integer"), std::string::npos) << file.error().message;
  path = write_file(path, R"({"task": "a.py", "trajectory": 0, "turn": 0, "correct": true})" "\n");
  file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("`turn` is below 1"), std::string::npos) << file.error().message;
}

TEST(metrics_trajectory_file, UpdateForAnUnknownTurnIsAnError) {
  auto path = write_file(scratch_dir() / "t.jsonl", turn_line("a.py", 0, 1, true, "1.5") + "\n" +
                                                        R"({"task": "a.py", "trajectory": 0, "turn": 2, "update": true, "return": 1, "advantage": 0})" "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(":2: update for a turn with no earlier record"), std::string::npos)
      << file.error().message;
}

TEST(metrics_trajectory_file, RepeatedTurnReplacesTheFirstAndBlankLinesAreSkipped) {
  auto path = write_file(scratch_dir() / "t.jsonl", turn_line("dir/a.py", 0, 1, false, "null") + "\n\n" +
                                                        turn_line("dir/a.py", 0, 1, true, "2.5") + "\n");
  auto file = read_trajectory_file(path);
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->records.size(), 1u);
  EXPECT_TRUE(file->records[0].correct);
  EXPECT_EQ(file->records[0].task_id, "a");  // from the path when the record has no task_id
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_NE(file->warnings[0].find(":3: repeats"), std::string::npos) << file->warnings[0];
}

TEST(metrics_trajectory_file, MissingFileAndRunDirectory) {
  auto missing = read_trajectory_file("/no/such/run/trajectories.jsonl");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/no/such/run/trajectories.jsonl"), std::string::npos);
  auto dir = scratch_dir();
  EXPECT_EQ(trajectory_file_path(dir), dir / "trajectories.jsonl");
  EXPECT_EQ(trajectory_file_path(data_file()), data_file());
  auto in_dir = read_trajectory_file(dir);
  ASSERT_FALSE(in_dir);
  EXPECT_NE(in_dir.error().message.find("is a directory"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::metrics
