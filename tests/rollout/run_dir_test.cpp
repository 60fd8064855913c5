// The run directory: run.json written on the first run, a resume with other settings refused
// naming the field, provenance allowed to differ, a folder of other files refused.
#include "rollout/run_dir.hpp"

#include <gtest/gtest.h>

#include "rollout/rollout_config.hpp"

#include "rollout_test_util.hpp"

namespace kernelrl::rollout {
namespace {

RolloutConfig config_in(const std::filesystem::path& out) {
  RolloutConfig c;
  c.tasks = {testing::source_path(testing::kTask)};
  c.out_dir = out;
  auto resolved = resolve(c);
  EXPECT_TRUE(resolved) << resolved.error().message;
  return *resolved;
}

const nlohmann::json kPolicy = {{"kind", "http"}, {"model", "m"}, {"temperature", 0.9}};

TEST(RolloutRunDir, WritesRunJsonThenResumesWithTheSameSettings) {
  auto out = testing::scratch_dir() / "run";
  auto config = config_in(out);
  auto first = open_run_dir(out, make_run_json(config, kPolicy, "cpu"));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(*first);
  auto stored = nlohmann::json::parse(testing::read_text(out / "run.json"));
  EXPECT_EQ(stored["strategy"], "mxn");
  EXPECT_EQ(stored["trajectories"], 16);
  EXPECT_EQ(stored["turns"], 4);
  EXPECT_TRUE(stored["beam_width"].is_null());
  EXPECT_EQ(stored["return"]["kind"], "discounted_sum");
  EXPECT_DOUBLE_EQ(stored["return"]["gamma"].get<double>(), 0.4);
  EXPECT_FALSE(stored["commit"].get<std::string>().empty());

  config.concurrency = 3;  // provenance may change between runs (the commit and start time do)
  auto again = open_run_dir(out, make_run_json(config, kPolicy, "cpu"));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(*again);
  auto elsewhere = open_run_dir(out, make_run_json(config, kPolicy, "cuda"));
  ASSERT_FALSE(elsewhere);  // speedups from two devices do not mix
  EXPECT_NE(elsewhere.error().message.find("`device`"), std::string::npos) << elsewhere.error().message;
}

TEST(RolloutRunDir, RefusesOtherSettingsNamingTheField) {
  auto out = testing::scratch_dir() / "run";
  auto config = config_in(out);
  ASSERT_TRUE(open_run_dir(out, make_run_json(config, kPolicy, "cpu")));

  auto hotter = kPolicy;
  hotter["temperature"] = 0.7;
  auto r = open_run_dir(out, make_run_json(config, hotter, "cpu"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("`policy.temperature` is 0.9 in the run but 0.7"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find((out / "run.json").string()), std::string::npos) << r.error().message;

  config.n_turns = 8;
  r = open_run_dir(out, make_run_json(config, kPolicy, "cpu"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("`turns`"), std::string::npos) << r.error().message;
}

// A setting added since a run began is absent from its run.json; left off ("") it is the same run,
// set to anything else it is not.
TEST(RolloutRunDir, ASettingAddedSinceTheRunBeganIsTheSameWhenLeftOff) {
  EXPECT_TRUE(check_same_settings({{"options", {{"n_trials", 5}}}}, {{"options", {{"n_trials", 5}, {"precision", ""}}}}));
  auto cast = check_same_settings({{"options", {{"n_trials", 5}}}}, {{"options", {{"n_trials", 5}, {"precision", "bf16"}}}});
  ASSERT_FALSE(cast);
  EXPECT_NE(cast.error().message.find("`options.precision` is \"(absent)\" in the run but \"bf16\""), std::string::npos)
      << cast.error().message;
  EXPECT_FALSE(check_same_settings({{"options", {{"n_trials", 5}, {"precision", ""}}}}, {{"options", {{"n_trials", 5}}}}));
}

TEST(RolloutRunDir, RefusesAFolderOfOtherFiles) {
  auto out = testing::scratch_dir();
  testing::write_text(out / "notes.txt", "mine");
  auto r = open_run_dir(out, make_run_json(config_in(out), kPolicy, "cpu"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no run.json"), std::string::npos) << r.error().message;
}

TEST(RolloutRunDir, CandidatesAreFiledByTaskTrajectoryAndTurn) {
  EXPECT_EQ(candidate_path("runs/a", common::Format::NATIVE, "001_matmul", 3, 2), "runs/a/candidates/001_matmul/t3_turn2.cu");
  EXPECT_EQ(candidate_path("runs/a", common::Format::HOST, "x", 0, 1), "runs/a/candidates/x/t0_turn1.cpp");
  EXPECT_EQ(candidate_path("runs/a", common::Format::KERNELBENCH, "x", 0, 1), "runs/a/candidates/x/t0_turn1.py");
}

// The strategy fixes the shape (parallel m x 1, serial 1 x n, beam width dividing m).
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
