// `kernelrl rollout` as a user meets it: against a scripted OpenAI-compatible server on loopback,
// 1 task x 2 trajectories x 2 turns on the CPU; a rerun resumes with nothing left to do; other
// settings are refused naming the field; a shipped level-1 task at its small size; a bad beam
// width is a usage error. Without cpp-httplib
// in the build, the command must refuse with exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/subprocess.hpp"
#include "rollout_test_util.hpp"
#if KERNELRL_HAVE_HTTP_POLICY
#include "scripted_server.hpp"
#endif

namespace kernelrl::rollout::testing {
namespace {

struct CliRun {
  int code;
  std::string output;
};

CliRun kernelrl(std::vector<std::string> args) {
  args.insert(args.begin(), KERNELRL_BINARY);
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(300000);
  auto r = common::run_process(args, KERNELRL_SOURCE_DIR,
                               {"KERNELRL_CACHE_DIR=" + (std::filesystem::temp_directory_path() / "kernelrl-rollout-cli-cache").string()},
                               limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? CliRun{r->exit_code, r->output} : CliRun{-1, ""};
}

std::vector<std::string> rollout_args(const std::string& base_url, const std::filesystem::path& out) {
  return {"rollout", "--tasks", kTask, "--format", "host", "--trajectories", "2", "--turns", "2",
          "--base-url", base_url, "--model", "test-model", "--concurrency", "2", "--out", out.string(),
          "--device", "cpu", "--trials", "2", "--warmup", "1", "--min-reps", "2", "--max-reps", "5",
          "--advantage-std", "off", "--speedup-cap", "2.5"};
}

#if KERNELRL_HAVE_HTTP_POLICY

TEST(RolloutCli, RunsAgainstAChatServerAndResumes) {
  policy::testing::ScriptedServer server;
  const std::string answer = policy::testing::completion_body(host_answer(kCorrect, "one pass per row"));
  server.script(std::vector<policy::testing::CannedReply>(4, {200, answer, {}, ""}));
  const auto out = scratch_dir() / "run";

  CliRun r = kernelrl(rollout_args(server.base_url(), out));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("4 turns run (4 correct, 0 unparsable, 0 without response)"), std::string::npos) << r.output;
  ASSERT_EQ(server.requests().size(), 4u);
  auto request = nlohmann::json::parse(server.requests()[0]);
  EXPECT_EQ(request["model"], "test-model");
  EXPECT_EQ(request["messages"].size(), 2u);
  auto lines = read_json_lines(out / "trajectories.jsonl");
  ASSERT_EQ(lines.size(), 8u);  // 4 turns, then 4 updates
  EXPECT_EQ(lines[0]["response"]["content"], host_answer(kCorrect, "one pass per row"));
  EXPECT_EQ(lines[7]["update"], true);
  auto run_json = nlohmann::json::parse(read_text(out / "run.json"));
  EXPECT_EQ(run_json["policy"]["base_url"], server.base_url());
  EXPECT_EQ(run_json["advantage"]["divide_by_std"], false);  // --advantage-std off: Dr. GRPO's advantages
  EXPECT_EQ(run_json["score"]["speedup_cap"], 2.5);

  r = kernelrl(rollout_args(server.base_url(), out));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(resumed): 1 tasks, 0 turns run"), std::string::npos) << r.output;
  EXPECT_EQ(server.requests().size(), 4u);

  auto hotter = rollout_args(server.base_url(), out);
  hotter.insert(hotter.end(), {"--temperature", "0.5"});
  r = kernelrl(hotter);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("`policy.temperature`"), std::string::npos) << r.output;
}

// A shipped level-1 task at its CPU size (`--size small`, tasks/README.md), answered with its host
// fixture: every turn is evaluated on the sized copy, which the prompt shows, and scores correct.
TEST(RolloutCli, ALevelOneTaskAtTheSmallSizeScoresItsHostFixtureCorrect) {
  policy::testing::ScriptedServer server;
  const std::string answer = policy::testing::completion_body(host_answer("tasks/fixtures/level1/002_relu.host.cpp", "relu"));
  server.script(std::vector<policy::testing::CannedReply>(4, {200, answer, {}, ""}));
  const auto out = scratch_dir() / "run";
  auto args = rollout_args(server.base_url(), out);
  args[2] = "tasks/level1/002_relu.py";
  args.insert(args.end(), {"--size", "small"});

  CliRun r = kernelrl(args);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("4 turns run (4 correct, 0 unparsable, 0 without response)"), std::string::npos) << r.output;
  auto lines = read_json_lines(out / "trajectories.jsonl");
  ASSERT_EQ(lines.size(), 8u);
  for (int i = 0; i < 4; ++i) {
    const auto& turn = lines[static_cast<std::size_t>(i)];
    ASSERT_TRUE(turn["correct"].get<bool>()) << turn.dump().substr(0, 2000);
    const std::string task = turn["result"]["task"];
    EXPECT_NE(task.find("/tasks/small/"), std::string::npos) << task;
    EXPECT_NE(turn["messages"][1]["content"].get<std::string>().find("# kernelrl: size 'small' of"), std::string::npos);
  }
  EXPECT_EQ(nlohmann::json::parse(read_text(out / "run.json"))["task_size"], "small");
  // Resuming at another size is refused, naming the field.
  args.back() = "full";
  r = kernelrl(args);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("`task_size`"), std::string::npos) << r.output;
}

TEST(RolloutCli, ABeamWidthThatDoesNotDivideIsAUsageError) {
  auto args = rollout_args("http://127.0.0.1:9/v1", scratch_dir() / "run");
  args.insert(args.end(), {"--strategy", "beam", "--beam-width", "3"});
  CliRun r = kernelrl(args);
  EXPECT_EQ(r.code, 64) << r.output;
  EXPECT_NE(r.output.find("beam width 3"), std::string::npos) << r.output;
}

TEST(RolloutCli, WithoutTheHttpClientTheCommandRefuses) {
  GTEST_SKIP() << "this build has cpp-httplib, so `kernelrl rollout` has its HTTP policy";
}

#else

TEST(RolloutCli, RunsAgainstAChatServerAndResumes) {
  GTEST_SKIP() << "cpp-httplib is not in this build: no HTTP policy and no scripted server to test against";
}

TEST(RolloutCli, ALevelOneTaskAtTheSmallSizeScoresItsHostFixtureCorrect) {
  GTEST_SKIP() << "cpp-httplib is not in this build: no HTTP policy and no scripted server to test against";
}

TEST(RolloutCli, WithoutTheHttpClientTheCommandRefuses) {
  CliRun r = kernelrl(rollout_args("http://127.0.0.1:9/v1", scratch_dir() / "run"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("libcpp-httplib"), std::string::npos) << r.output;
}

#endif

}  // namespace
}  // namespace kernelrl::rollout::testing
