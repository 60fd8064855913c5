// trajectories.jsonl as the rollout keeps it: a line cut off by a kill is removed (or finished
// when it is whole JSON), a bad line before the end is an error, appends from many threads stay
// whole lines, and what is written reads back the same.
#include "trajectory/log.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "trajectory/reader.hpp"
#include "trajectory_test_util.hpp"

namespace kernelrl::trajectory {
namespace {

using testing::read_text;
using testing::turn_line;
using testing::write_file;

const std::string kFirst = turn_line("a.py", 0, 1, true, "1.5");
const std::string kSecond = turn_line("a.py", 1, 1, false, "null");

TEST(TrajectoryLog, MissingFileHoldsNoRecords) {
  auto log = load_and_repair(testing::scratch_dir() / "trajectories.jsonl");
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_TRUE(log->records.empty());
}

TEST(TrajectoryLog, CutsOffAPartialLastLine) {
  auto file = write_file(testing::scratch_dir() / "trajectories.jsonl", kFirst + "\n" + kSecond + "\n{\"task\":\"a.py\",\"tra");
  auto log = load_and_repair(file);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->records.size(), 2u);
  EXPECT_TRUE(log->dropped_partial_line);
  EXPECT_EQ(read_text(file), kFirst + "\n" + kSecond + "\n");
}

TEST(TrajectoryLog, FinishesAWholeLastLineThatLostItsNewline) {
  auto file = write_file(testing::scratch_dir() / "trajectories.jsonl", kFirst + "\n" + kSecond);
  auto log = load_and_repair(file);
  ASSERT_TRUE(log) << log.error().message;
  EXPECT_EQ(log->records.size(), 2u);
  EXPECT_FALSE(log->dropped_partial_line);
  EXPECT_EQ(read_text(file), kFirst + "\n" + kSecond + "\n");
}

TEST(TrajectoryLog, ABadLineBeforeTheEndIsAnErrorNamingIt) {
  auto file = write_file(testing::scratch_dir() / "trajectories.jsonl", kFirst + "\n{oops\n" + kSecond + "\n");
  auto log = load_and_repair(file);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find(file.string() + ":2"), std::string::npos) << log.error().message;
}

TEST(TrajectoryLog, ARecordWithoutItsFieldsIsAnErrorNamingLineAndField) {
  auto file = write_file(testing::scratch_dir() / "trajectories.jsonl", kFirst + "\n{\"a\": 1}\n");
  auto log = load_and_repair(file);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find(file.string() + ":2: missing field `task`"), std::string::npos) << log.error().message;
}

TEST(TrajectoryLog, AppendsFromManyThreadsAreWholeLines) {
  auto file = testing::scratch_dir() / "trajectories.jsonl";
  auto log = TrajectoryLog::open(file);
  ASSERT_TRUE(log) << log.error().message;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        TurnRecord r;
        r.task = "t" + std::to_string(t) + ".py";
        r.trajectory = i;
        r.summary = std::string(3000, 'x');
        ASSERT_TRUE((*log)->append(r));
      }
    });
  }
  for (auto& t : threads) t.join();
  auto read = read_trajectory_file(file);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->records.size(), 200u);
  EXPECT_TRUE(read->warnings.empty());
}

// Every field and each outcome survive writing and reading back; the update completes the turn.
TEST(TrajectoryLog, WrittenRecordsReadBackTheSame) {
  TurnRecord evaluated;
  evaluated.task = "tasks/level1/001_relu.py";
  evaluated.task_id = "001_relu";
  evaluated.level = 1;
  evaluated.split = "train";
  evaluated.trajectory = 2;
  evaluated.turn = 3;
  evaluated.parent = TurnRef{1, 2};
  evaluated.messages = {{"system", "sys"}, {"user", "write relu"}};
  evaluated.response = {"```cuda\nk\n```", "thoughts", "stop", std::vector<std::int64_t>{1, 2}, std::vector<double>{-0.5, -1},
                        7.5};
  evaluated.code = "k";
  evaluated.summary = "fast";
  evaluated.outcome = TurnOutcome::EVALUATED;
  evaluated.result = nlohmann::json{{"status", "OK"}, {"speedup", 1.5}};
  evaluated.correct = true;
  evaluated.speedup = 1.5;
  evaluated.score = 2.0;
  evaluated.return_kind = "discounted_sum";
  evaluated.advantage_kind = "grpo_task";
  TurnRecord unsent = evaluated;
  unsent.trajectory = 0;
  unsent.turn = 1;
  unsent.parent.reset();
  unsent.outcome = TurnOutcome::PROMPT_TOO_LONG;
  unsent.error = "the prompt takes 900 tokens";
  unsent.result.reset();
  unsent.code.reset();
  unsent.response = {};
  unsent.correct = false;
  unsent.speedup.reset();
  unsent.score = 0;

  auto file = testing::scratch_dir() / "trajectories.jsonl";
  {
    auto log = TrajectoryLog::open(file);
    ASSERT_TRUE(log) << log.error().message;
    ASSERT_TRUE((*log)->append(evaluated));
    ASSERT_TRUE((*log)->append(unsent));
    ASSERT_TRUE((*log)->append(TurnUpdate{evaluated.task, evaluated.ref(), 3.5, -0.25}));
  }
  const std::string text = read_text(file);
  EXPECT_NE(text.find("\"prompt_error\":\"the prompt takes 900 tokens\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"update\":true"), std::string::npos) << text;
  auto read = load_and_repair(file);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->records.size(), 2u);
  TurnRecord credited = evaluated;
  credited.return_ = 3.5;
  credited.advantage = -0.25;
  const TurnRecord& a = read->records[0];
  EXPECT_EQ(to_json(a), to_json(credited)) << "the update applied, nothing else changed";
  EXPECT_EQ(a.outcome, TurnOutcome::EVALUATED);
  EXPECT_TRUE(a.credited());
  const TurnRecord& b = read->records[1];
  EXPECT_EQ(to_json(b), to_json(unsent));
  EXPECT_EQ(b.outcome, TurnOutcome::PROMPT_TOO_LONG);
  EXPECT_EQ(b.status(), "PROMPT_TOO_LONG");
  EXPECT_TRUE(b.credited()) << "an unsent turn has nothing to credit";
}

}  // namespace
}  // namespace kernelrl::trajectory
