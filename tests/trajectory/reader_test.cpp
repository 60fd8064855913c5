// Reading trajectories.jsonl: updates applied, a truncated last line forgiven, every other fault
// an Error naming file and line; files of earlier versions read as well.
#include "trajectory/reader.hpp"

#include <gtest/gtest.h>

#include "trajectory_test_util.hpp"

namespace kernelrl::trajectory {
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

TEST(TrajectoryReader, ReadsTheHandMadeRun) {
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

TEST(TrajectoryReader, AppliesUpdateRecords) {
  auto file = read_trajectory_file(data_file());
  ASSERT_TRUE(file) << file.error().message;
  const TurnRecord* updated = find(*file, "001_relu", 0, 1);
  ASSERT_NE(updated, nullptr);
  EXPECT_EQ(updated->return_, 0.92);
  EXPECT_EQ(updated->advantage, -0.25);
  EXPECT_FALSE(updated->correct);  // an update touches only return and advantage
  EXPECT_FALSE(find(*file, "001_relu", 0, 2)->return_.has_value());
}

TEST(TrajectoryReader, IgnoresATruncatedLastLineWithAWarning) {
  auto file = read_trajectory_file(data_file());
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_NE(file->warnings[0].find("trajectories.jsonl:26"), std::string::npos) << file->warnings[0];
  EXPECT_EQ(find(*file, "003_conv", 4, 1), nullptr);
}

TEST(TrajectoryReader, BadJsonBeforeTheLastLineNamesFileAndLine) {
  auto path = write_file(scratch_dir() / "t.jsonl",
                         turn_line("a.py", 0, 1, true, "1.5") + "\n{\"task\": \n" + turn_line("a.py", 1, 1, false, "null") + "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(path.string() + ":2"), std::string::npos) << file.error().message;
}

TEST(TrajectoryReader, MissingFieldsAreNamed) {
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

TEST(TrajectoryReader, UpdateForAnUnknownTurnIsAnError) {
  auto path = write_file(scratch_dir() / "t.jsonl", turn_line("a.py", 0, 1, true, "1.5") + "\n" +
                                                        R"({"task": "a.py", "trajectory": 0, "turn": 2, "update": true, "return": 1, "advantage": 0})" "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(":2: update for a turn with no earlier record"), std::string::npos)
      << file.error().message;
}

TEST(TrajectoryReader, RepeatedTurnReplacesTheFirstAndBlankLinesAreSkipped) {
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

// The layout of the first rollout (commit 23a060b): no `prompt_error` key. Each outcome is derived
// as it was then, and the updates complete return and advantage.
TEST(TrajectoryReader, ReadsAFileOfTheFirstRolloutVersion) {
  auto file = read_trajectory_file(testing::source_path("tests/trajectory/data/trajectories_23a060b.jsonl"));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_TRUE(file->warnings.empty());
  ASSERT_EQ(file->records.size(), 4u);
  const TurnRecord* wrong = find(*file, "001_relu", 0, 1);
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->outcome, TurnOutcome::EVALUATED);
  EXPECT_EQ(wrong->status(), "WRONG_OUTPUT");
  EXPECT_EQ(wrong->feedback(), "output 0: 12 of 1024 elements differ");
  EXPECT_EQ(wrong->messages.size(), 2u);
  EXPECT_EQ(wrong->response.token_ids, (std::vector<std::int64_t>{11, 12, 13}));
  EXPECT_EQ(wrong->advantage, -1.0);
  EXPECT_TRUE(wrong->credited());
  const TurnRecord* right = find(*file, "001_relu", 1, 1);
  EXPECT_EQ(right->status(), "OK");
  EXPECT_EQ(right->speedup, 2.0);
  EXPECT_EQ(right->return_, 2.3);
  const TurnRecord* unparsable = find(*file, "001_relu", 0, 2);
  EXPECT_EQ(unparsable->outcome, TurnOutcome::PARSE_ERROR);
  EXPECT_EQ(unparsable->status(), "PARSE_ERROR");
  EXPECT_EQ(unparsable->feedback(), "no ```cuda block in the response");
  EXPECT_FALSE(unparsable->code.has_value());
  EXPECT_EQ(unparsable->response.finish_reason, "length");
  const TurnRecord* no_response = find(*file, "001_relu", 1, 2);
  EXPECT_EQ(no_response->outcome, TurnOutcome::POLICY_ERROR);
  EXPECT_NE(no_response->feedback().find("connection refused"), std::string::npos);
  EXPECT_FALSE(no_response->response.token_ids.has_value());
}

TEST(TrajectoryReader, HandMadeRecordsWithoutResultOrErrorHaveNoOutcome) {
  auto file = read_trajectory_file(testing::data_file());
  ASSERT_TRUE(file) << file.error().message;
  const TurnRecord* r = find(*file, "001_relu", 3, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome, TurnOutcome::NO_RESULT);
  EXPECT_EQ(r->status(), "");
  EXPECT_EQ(r->feedback(), "");
}

TEST(TrajectoryReader, WithoutTextDropsPromptAndResponseOnly) {
  auto path = testing::source_path("tests/trajectory/data/trajectories_23a060b.jsonl");
  auto file = read_trajectory_file(path, Detail::WITHOUT_TEXT);
  ASSERT_TRUE(file) << file.error().message;
  const TurnRecord* wrong = find(*file, "001_relu", 0, 1);
  ASSERT_NE(wrong, nullptr);
  EXPECT_TRUE(wrong->messages.empty());
  EXPECT_TRUE(wrong->response.content.empty());
  EXPECT_FALSE(wrong->response.token_ids.has_value());
  EXPECT_EQ(wrong->code, "__global__ void k() {}");
  EXPECT_EQ(wrong->status(), "WRONG_OUTPUT");
  EXPECT_EQ(wrong->advantage, -1.0);
}

TEST(TrajectoryReader, AFieldOfTheWrongTypeIsNamed) {
  auto path = testing::write_file(testing::scratch_dir() / "t.jsonl",
                                  R"({"task": "a.py", "trajectory": 0, "turn": 1, "correct": true, "parse_error": 3})" "\n");
  auto file = read_trajectory_file(path);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(path.string() + ":1: field `parse_error` is not a string or null"), std::string::npos)
      << file.error().message;
}

TEST(TrajectoryReader, MissingFileAndRunDirectory) {
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
}  // namespace kernelrl::trajectory
