// Every metric of the hand-made run (tests/metrics/data/trajectories.jsonl), computed by hand:
//
//   task (level, split)       traj  turn 1      turn 2      correct  best speedup  best after turn 1
//   001_relu (1, train)       0     wrong       ok 2.0x     yes      2.0           0
//                             1     ok 1.0x     ok 0.5x     yes      1.0           1.0
//                             2     wrong       wrong       no       0             0
//                             3     ok 3.0x     wrong       yes      3.0           3.0
//   002_softmax (2, test)     0     ok 0.8x     ok 1.2x     yes      1.2           0.8
//                             1     wrong       wrong       no       0             0
//                             2     wrong       wrong       no       0             0
//                             3     wrong       ok 0.6x     yes      0.6           0
//   003_conv (null, train)    2     wrong       ok, untimed yes      0             0
//                             0,1,3 wrong       wrong       no       0             0
#include "metrics/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "metrics_test_util.hpp"

namespace kernelrl::metrics {
namespace {

constexpr double tol = 1e-12;

Report hand_made_report() {
  auto report = report_from_run(testing::data_file());
  EXPECT_TRUE(report) << report.error().message;
  return report ? *report : Report{};
}

void expect_ks(const std::vector<KValue>& got, const std::vector<KValue>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    EXPECT_EQ(got[j].k, want[j].k);
    EXPECT_NEAR(got[j].value, want[j].value, tol) << "k = " << want[j].k;
  }
}

void expect_fast_p(const std::vector<FastP>& got, const std::vector<FastP>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    EXPECT_EQ(got[j].p, want[j].p);
    EXPECT_NEAR(got[j].at_best, want[j].at_best, tol) << "p = " << want[j].p;
    EXPECT_NEAR(got[j].at_1, want[j].at_1, tol) << "p = " << want[j].p;
  }
}

void expect_turns(const std::vector<TurnPoint>& got, const std::vector<TurnPoint>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    EXPECT_EQ(got[j].turn, want[j].turn);
    EXPECT_NEAR(got[j].correctness, want[j].correctness, tol) << "turn " << want[j].turn;
    EXPECT_NEAR(got[j].mean_best_speedup, want[j].mean_best_speedup, tol) << "turn " << want[j].turn;
  }
}

TEST(metrics_task, Relu) {
  Report r = hand_made_report();
  ASSERT_EQ(r.tasks.size(), 3u);
  const TaskMetrics& t = r.tasks[1];  // tasks sort by path: extra/, level1/, level2/
  EXPECT_EQ(t.task_id, "001_relu");
  EXPECT_EQ(t.n_trajectories, 4);
  EXPECT_EQ(t.n_correct_trajectories, 3);
  EXPECT_EQ(t.n_turns, 2);
  EXPECT_DOUBLE_EQ(t.correctness, 0.75);
  expect_ks(t.pass_at_k, {{1, 0.75}, {2, 1.0}, {4, 1.0}});
  expect_ks(t.best_at_k, {{1, 1.5}, {2, 14.0 / 6}, {4, 3.0}});  // sorted {0, 1, 2, 3}
  EXPECT_DOUBLE_EQ(t.best_speedup, 3.0);
  expect_fast_p(t.fast_p, {{0, 1, 0.75}, {1, 1, 0.5}, {1.5, 1, 0.5}, {2, 1, 0.25}});
  expect_turns(t.by_turn, {{1, 0.5, 1.0}, {2, 0.75, 1.5}});
}

TEST(metrics_task, Softmax) {
  Report r = hand_made_report();
  const TaskMetrics& t = r.tasks[2];
  EXPECT_EQ(t.task_id, "002_softmax");
  EXPECT_EQ(t.n_correct_trajectories, 2);
  EXPECT_DOUBLE_EQ(t.correctness, 0.5);
  expect_ks(t.pass_at_k, {{1, 0.5}, {2, 5.0 / 6}, {4, 1.0}});
  expect_ks(t.best_at_k, {{1, 0.45}, {2, 0.8}, {4, 1.2}});  // sorted {0, 0, 0.6, 1.2}
  EXPECT_DOUBLE_EQ(t.best_speedup, 1.2);
  expect_fast_p(t.fast_p, {{0, 1, 0.5}, {1, 1, 0.25}, {1.5, 0, 0}, {2, 0, 0}});
  expect_turns(t.by_turn, {{1, 0.25, 0.2}, {2, 0.5, 0.45}});
}

TEST(metrics_task, ConvCorrectButUntimedCountsAsSpeedupZero) {
  Report r = hand_made_report();
  const TaskMetrics& t = r.tasks[0];
  EXPECT_EQ(t.task_id, "003_conv");
  EXPECT_FALSE(t.level.has_value());
  EXPECT_EQ(t.n_trajectories, 4);  // the truncated fifth trajectory is not counted
  EXPECT_DOUBLE_EQ(t.correctness, 0.25);
  expect_ks(t.pass_at_k, {{1, 0.25}, {2, 0.5}, {4, 1.0}});
  expect_ks(t.best_at_k, {{1, 0}, {2, 0}, {4, 0}});
  EXPECT_DOUBLE_EQ(t.best_speedup, 0.0);
  expect_fast_p(t.fast_p, {{0, 0, 0}, {1, 0, 0}, {1.5, 0, 0}, {2, 0, 0}});
  expect_turns(t.by_turn, {{1, 0, 0}, {2, 0.25, 0}});
}

TEST(metrics_group, Overall) {
  const GroupMetrics g = hand_made_report().overall;
  EXPECT_EQ(g.name, "overall");
  EXPECT_EQ(g.n_tasks, 3);
  EXPECT_EQ(g.n_trajectories, 12);
  EXPECT_NEAR(g.correctness, 0.5, tol);
  EXPECT_NEAR(g.solved_rate, 1.0, tol);
  expect_ks(g.pass_at_k, {{1, 0.5}, {2, (1 + 5.0 / 6 + 0.5) / 3}, {4, 1.0}});
  expect_ks(g.best_at_k, {{1, 0.65}, {2, (14.0 / 6 + 0.8) / 3}, {4, 1.4}});
  EXPECT_NEAR(g.mean_best_speedup, 1.4, tol);
  expect_fast_p(g.fast_p, {{0, 2.0 / 3, 1.25 / 3}, {1, 2.0 / 3, 0.25}, {1.5, 1.0 / 3, 0.5 / 3}, {2, 1.0 / 3, 0.25 / 3}});
  ASSERT_TRUE(g.geomean_speedup.has_value());
  EXPECT_NEAR(*g.geomean_speedup, std::sqrt(3.0 * 1.2), tol);  // conv is correct but has no speedup
  EXPECT_EQ(g.n_geomean_tasks, 2);
  expect_turns(g.by_turn, {{1, 0.25, 0.4}, {2, 0.5, 0.65}});
}

TEST(metrics_group, ByLevelAndSplit) {
  Report r = hand_made_report();
  ASSERT_EQ(r.by_level.size(), 3u);
  EXPECT_EQ(r.by_level[0].name, "level 1");
  EXPECT_EQ(r.by_level[1].name, "level 2");
  EXPECT_EQ(r.by_level[2].name, "level none");
  EXPECT_NEAR(r.by_level[0].correctness, 0.75, tol);
  EXPECT_NEAR(*r.by_level[1].geomean_speedup, 1.2, tol);
  EXPECT_FALSE(r.by_level[2].geomean_speedup.has_value());
  ASSERT_EQ(r.by_split.size(), 2u);
  EXPECT_EQ(r.by_split[0].name, "split test");
  EXPECT_EQ(r.by_split[1].name, "split train");
  const GroupMetrics& train = r.by_split[1];  // relu and conv
  EXPECT_EQ(train.n_tasks, 2);
  EXPECT_NEAR(train.correctness, 0.5, tol);
  expect_ks(train.pass_at_k, {{1, 0.5}, {2, 0.75}, {4, 1.0}});
  expect_ks(train.best_at_k, {{1, 0.75}, {2, 7.0 / 6}, {4, 1.5}});
  expect_fast_p(train.fast_p, {{0, 0.5, 0.375}, {1, 0.5, 0.25}, {1.5, 0.5, 0.25}, {2, 0.5, 0.125}});
  expect_turns(train.by_turn, {{1, 0.25, 0.5}, {2, 0.5, 0.75}});
}

TEST(metrics_group, KsStopAtTheSmallestTaskAndShortTasksKeepTheirLastTurn) {
  // Task a: 4 trajectories of 3 turns; task b: 2 trajectories of 1 turn.
  std::vector<TurnRecord> records;
  for (int i = 0; i < 4; ++i) {
    for (int turn = 1; turn <= 3; ++turn) records.push_back({"a.py", "a", 1, "train", i, turn, turn == 3, 2.0, {}, {}, "", "", "", 0});
  }
  records.push_back({"b.py", "b", 1, "train", 0, 1, true, 1.0, {}, {}, "", "", "", 0});
  records.push_back({"b.py", "b", 1, "train", 1, 1, false, {}, {}, {}, "", "", "", 0});
  Report r = compute_report(records);
  expect_ks(r.overall.pass_at_k, {{1, (1 + 0.5) / 2}, {2, 1.0}});
  expect_turns(r.overall.by_turn, {{1, 0.25, 0.25}, {2, 0.25, 0.25}, {3, 0.75, 1.25}});
}

TEST(metrics_report, EmptyFileIsAnError) {
  auto path = testing::write_file(testing::scratch_dir() / "trajectories.jsonl", "");
  auto report = report_from_run(path.parent_path());
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find(path.string() + ": holds no turn records"), std::string::npos)
      << report.error().message;
}

}  // namespace
}  // namespace kernelrl::metrics
