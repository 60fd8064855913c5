// `kernelrl rollout` end to end on the CPU in the host format, against a loopback chat server that
// misbehaves the ways real ones do: an answer without a code block, an empty answer, one cut off
// by the token limit inside its fence, a slow one, a 429 and a 500 that succeed on retry, and a
// 400 that the client does not retry (a turn without a response). 2 tasks x 4 trajectories x 3
// turns; then the records are checked against the recipe and `kernelrl report` reads the run.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/subprocess.hpp"
#include "rl/rewards.hpp"
#include "rollout_test_util.hpp"
#if KERNELRL_HAVE_HTTP_POLICY
#include "scripted_server.hpp"
#endif

namespace kernelrl::rollout::testing {
namespace {

#if KERNELRL_HAVE_HTTP_POLICY

using nlohmann::json;
using policy::testing::CannedReply;
using policy::testing::completion_body;

constexpr const char* kThought = "SECRET-THOUGHT";  // in every <think>; must never reach a prompt

std::string answer(const std::string& relative, const std::string& summary) {
  return "<think>" + std::string(kThought) + ": rows are independent</think>\n```cpp\n" +
         read_text(source_path(relative)) + "```\n" + summary;
}

std::string truncated_body() {
  const std::string content = "<think>" + std::string(kThought) + "</think>\n```cpp\n#include <kernelrl/abi.h>\nint f(";
  return json{{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "length"}}}}}
      .dump();
}

int run_cli(const std::vector<std::string>& args, std::string* output = nullptr) {
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(300000);
  auto r = common::run_process(args, KERNELRL_SOURCE_DIR,
                               {"KERNELRL_CACHE_DIR=" + (std::filesystem::temp_directory_path() / "kernelrl-rollout-e2e-cache").string()},
                               limits);
  EXPECT_TRUE(r) << r.error().message;
  if (output && r) *output = r->output;
  return r ? r->exit_code : -1;
}

TEST(RolloutEndToEnd, MisbehavingServerTwoTasksFourTrajectoriesThreeTurns) {
  const auto dir = scratch_dir();
  std::filesystem::create_directories(dir / "tasks");
  std::filesystem::copy_file(source_path(kTask), dir / "tasks" / "task_softmax_small.py");
  std::filesystem::copy_file(source_path("tests/adversarial/task_softmax_wide.py"), dir / "tasks" / "task_softmax_wide.py");
  const auto out = dir / "run";

  const std::string correct = completion_body(answer(kCorrect, "one pass per row"));
  const std::string wrong = completion_body(answer(kOffByOne, "skipped a column"));
  const std::vector<CannedReply> cycle = {
      {200, correct, {}, ""},
      {200, completion_body("<think>" + std::string(kThought) + "</think>\nI would write a loop over rows."), {}, ""},
      {200, wrong, {}, ""},
      {200, completion_body(""), {}, ""},
      {200, truncated_body(), {}, ""},
      {200, correct, std::chrono::milliseconds(200), ""},  // slow
  };
  std::vector<CannedReply> replies;
  for (int i = 0; i < 4; ++i) replies.insert(replies.end(), cycle.begin(), cycle.end());  // 24 answers
  // Retried ones: a 429 and a 500 each followed by a success; a 400 is not retried (no response).
  replies.insert(replies.begin() + 3, {{429, R"({"error":"slow down"})", {}, "0"}, {200, correct, {}, ""}});
  replies.insert(replies.begin() + 9, {{500, R"({"error":"oops"})", {}, ""}, {200, wrong, {}, ""}});
  replies.insert(replies.begin() + 14, {400, R"({"error":"bad request"})", {}, ""});
  replies.resize(26);  // 24 turns; the 429 and the 500 take a request each
  policy::testing::ScriptedServer server;
  server.script(replies);

  std::string output;
  const int code = run_cli({KERNELRL_BINARY, "rollout", "--tasks", (dir / "tasks").string(), "--format", "host",
                            "--trajectories", "4", "--turns", "3", "--base-url", server.base_url(), "--model", "m",
                            "--concurrency", "4", "--out", out.string(), "--device", "cpu", "--trials", "2",
                            "--warmup", "1", "--min-reps", "2", "--max-reps", "3"},
                           &output);
  ASSERT_EQ(code, 0) << output;
  EXPECT_EQ(server.requests().size(), 26u);
  EXPECT_NE(output.find("24 turns run"), std::string::npos) << output;
  EXPECT_NE(output.find("1 without response"), std::string::npos) << output;

  // Every (task, trajectory, turn) exactly once; updates for all of them but the turn without a
  // response (no return, no advantage: an infrastructure failure is not the model's answer).
  std::map<std::tuple<std::string, int, int>, json> turns, updates;
  for (auto& line : read_json_lines(out / "trajectories.jsonl")) {
    const auto key = std::make_tuple(line["task"].get<std::string>(), line["trajectory"].get<int>(), line["turn"].get<int>());
    if (line.value("update", false)) {
      EXPECT_TRUE(updates.emplace(key, line).second) << "second update for " << line.dump();
    } else {
      EXPECT_TRUE(turns.emplace(key, line).second) << "second record for " << line.dump();
    }
  }
  ASSERT_EQ(turns.size(), 24u);
  ASSERT_EQ(updates.size(), 23u);
  std::set<std::string> tasks;
  for (const auto& [key, r] : turns) {
    tasks.insert(std::get<0>(key));
    EXPECT_GE(std::get<1>(key), 0);
    EXPECT_LT(std::get<1>(key), 4);
    EXPECT_GE(std::get<2>(key), 1);
    EXPECT_LE(std::get<2>(key), 3);
  }
  ASSERT_EQ(tasks.size(), 2u);

  int n_correct = 0, n_wrong = 0, n_parse = 0, n_policy = 0, n_cut_off = 0;
  for (const auto& [key, r] : turns) {
    const std::string where = r.dump().substr(0, 300);
    const std::string content = r["response"]["content"];
    // Scores: parse errors and policy errors 0 and never evaluated; correct kernels 0.3 + speedup.
    if (!r["policy_error"].is_null()) {
      ++n_policy;
      EXPECT_NE(r["policy_error"].get<std::string>().find(server.base_url()), std::string::npos) << where;
      EXPECT_TRUE(r["parse_error"].is_null()) << where;
      EXPECT_TRUE(r["result"].is_null()) << where;
      EXPECT_EQ(r["score"], 0.0) << where;
    } else if (!r["parse_error"].is_null()) {
      ++n_parse;
      n_cut_off += r["response"]["finish_reason"] == "length" ? 1 : 0;
      EXPECT_TRUE(r["result"].is_null()) << where;
      EXPECT_TRUE(r["code"].is_null()) << where;
      EXPECT_EQ(r["score"], 0.0) << where;
    } else if (r["correct"].get<bool>()) {
      ++n_correct;
      EXPECT_NE(content.find("one pass per row"), std::string::npos) << where;
      ASSERT_TRUE(r["speedup"].is_number()) << where;
      EXPECT_NEAR(r["score"].get<double>(), 0.3 + r["speedup"].get<double>(), 1e-9) << where;
    } else {
      ++n_wrong;
      EXPECT_NE(content.find("skipped a column"), std::string::npos) << where;
      EXPECT_FALSE(r["result"].is_null()) << where;
      EXPECT_EQ(r["score"], 0.0) << where;
    }
    if (r["policy_error"].is_null() && !content.empty()) {  // thoughts go to the record, not the prompts
      EXPECT_NE(r["response"]["reasoning"].get<std::string>().find(kThought), std::string::npos) << where;
    }
    // Prompts: never an earlier thought; turn t shows turn t - 1's code and feedback.
    for (const auto& m : r["messages"]) EXPECT_EQ(m["content"].get<std::string>().find(kThought), std::string::npos) << where;
    const auto& [task, j, t] = key;
    if (t == 1) continue;
    const json& prev = turns.at({task, j, t - 1});
    const std::string prompt = r["messages"][1]["content"];
    EXPECT_NE(prompt.find("Attempt " + std::to_string(t - 1) + ":"), std::string::npos) << where;
    if (prev["code"].is_string()) EXPECT_NE(prompt.find(prev["code"].get<std::string>()), std::string::npos) << where;
    std::string feedback = "Result: ";
    if (!prev["policy_error"].is_null()) feedback += "no response: " + prev["policy_error"].get<std::string>();
    else if (!prev["parse_error"].is_null()) feedback += "failed to parse: " + prev["parse_error"].get<std::string>();
    else if (prev["correct"].get<bool>()) feedback += "correct, speedup";
    else feedback += "incorrect: ";
    EXPECT_NE(prompt.find(feedback), std::string::npos) << where << "\nexpected: " << feedback;
  }
  // The 24 turns' answers, in the order served: C N W (429) C E T S C (500) W N W E (400) T S, then
  // C N W E T S, C N W: 8 correct (C, S), 5 wrong, 10 unparsable (N, E, T), 1 without response.
  EXPECT_EQ(n_correct, 8);
  EXPECT_EQ(n_wrong, 5);
  EXPECT_EQ(n_parse, 10);
  EXPECT_EQ(n_cut_off, 3);  // the truncated answers are parse errors
  EXPECT_EQ(n_policy, 1);

  // Returns and advantages: rl::returns / rl::advantages over the recorded scores, per task.
  std::map<std::string, bool> any_correct_by_trajectory;
  std::map<std::string, int> correct_trajectories;
  for (const auto& task : tasks) {
    std::vector<std::vector<std::optional<double>>> returns;
    for (int j = 0; j < 4; ++j) {
      std::vector<double> scores;
      std::vector<int> answered;  // the turns with a response: the path the returns run over
      bool any = false;
      for (int t = 1; t <= 3; ++t) {
        const json& r = turns.at({task, j, t});
        any = any || r["correct"].get<bool>();
        if (!r["policy_error"].is_null()) continue;
        scores.push_back(r["score"].get<double>());
        answered.push_back(t);
      }
      correct_trajectories[task] += any ? 1 : 0;
      const auto R = rl::returns(scores, {rl::ReturnKind::DISCOUNTED_SUM, 0.4});
      returns.emplace_back(3);
      for (std::size_t k = 0; k < answered.size(); ++k) returns.back()[static_cast<std::size_t>(answered[k] - 1)] = R[k];
    }
    const auto advantages = rl::advantages_where_present(returns, {});
    for (int j = 0; j < 4; ++j) {
      for (int t = 1; t <= 3; ++t) {
        if (!returns[j][t - 1]) {
          EXPECT_EQ(updates.count({task, j, t}), 0u) << task << " " << j << " " << t;
          continue;
        }
        const json& u = updates.at({task, j, t});
        EXPECT_NEAR(u["return"].get<double>(), *returns[j][t - 1], 1e-9) << u.dump();
        EXPECT_NEAR(u["advantage"].get<double>(), *advantages[j][t - 1], 1e-9) << u.dump();
      }
    }
  }

  // The report reads the run: per-task correctness = trajectories with a correct turn / 4.
  const auto report_json = dir / "report.json";
  ASSERT_EQ(run_cli({"/bin/sh", "-c",
                     std::string("'") + KERNELRL_BINARY + "' report '" + out.string() + "' --json > '" + report_json.string() + "'"},
                    &output),
            0)
      << output;
  const json report = json::parse(read_text(report_json));
  ASSERT_EQ(report["tasks"].size(), 2u) << report.dump();
  for (const auto& t : report["tasks"]) {
    const std::string task = t["task"];
    ASSERT_TRUE(correct_trajectories.count(task)) << task;
    EXPECT_EQ(t["n_trajectories"], 4);
    EXPECT_EQ(t["n_correct_trajectories"], correct_trajectories[task]) << task;
    EXPECT_NEAR(t["correctness"].get<double>(), correct_trajectories[task] / 4.0, 1e-12) << task;
  }
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

#else

TEST(RolloutEndToEnd, MisbehavingServerTwoTasksFourTrajectoriesThreeTurns) {
  GTEST_SKIP() << "cpp-httplib is not in this build: no HTTP policy and no scripted server";
}

#endif

}  // namespace
}  // namespace kernelrl::rollout::testing
