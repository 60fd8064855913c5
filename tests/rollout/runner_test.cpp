// The rollout engine on the CPU with a scripted policy: records follow docs/trajectories.md,
// feedback reaches the next turn's prompt, scores, returns and advantages are rl::'s, a response
// without code is a parse error that is never evaluated, beam search records its parents and
// keeps the best, and `kernelrl report`'s library reads the run.
#include <gtest/gtest.h>

#include <set>

#include "metrics/metrics.hpp"
#include "rl/rewards.hpp"
#include "runner_fixture.hpp"

namespace kernelrl::rollout::testing {
namespace {

using nlohmann::json;

TEST_F(RolloutRun, WrongThenCorrectRecordsFeedbackScoresReturnsAndAdvantages) {
  const auto out = scratch_dir() / "run";
  auto policy = wrong_then_correct();
  auto summary = run(config(out, 2, 2), policy);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(policy.n_calls(), 4);
  EXPECT_EQ(summary->n_turns_run, 4);
  EXPECT_EQ(summary->n_correct_run, 2);
  EXPECT_FALSE(summary->resumed);

  const RunRecords records = read_run(out);
  ASSERT_EQ(records.n_turn_lines, 4);
  ASSERT_EQ(records.n_update_lines, 4);
  for (int j = 0; j < 2; ++j) {
    const json& first = records.turn(j, 1);
    const json& second = records.turn(j, 2);
    for (const json* r : {&first, &second}) {
      EXPECT_EQ((*r)["schema"], 1);
      EXPECT_EQ((*r)["task"], source_path(kTask));
      EXPECT_EQ((*r)["task_id"], "task_softmax_small");
      EXPECT_TRUE((*r)["level"].is_null());
      EXPECT_TRUE((*r)["split"].is_null());
      EXPECT_TRUE((*r)["parent"].is_null());
      EXPECT_TRUE((*r)["parse_error"].is_null());
      EXPECT_TRUE((*r)["return"].is_null());  // completed by the update records
      EXPECT_TRUE((*r)["advantage"].is_null());
      EXPECT_EQ((*r)["return_kind"], "discounted_sum");
      EXPECT_EQ((*r)["advantage_kind"], "grpo_task");
      EXPECT_EQ((*r)["response"]["tokens"], json({1, 2, 3}));
      EXPECT_EQ((*r)["response"]["reasoning"], "rows are independent");  // from the <think> tags
      EXPECT_EQ((*r)["response"]["finish_reason"], "stop");
      ASSERT_EQ((*r)["messages"].size(), 2u);
      EXPECT_EQ((*r)["messages"][0]["role"], "system");
    }
    EXPECT_EQ(first["result"]["status"], "WRONG_OUTPUT");
    EXPECT_EQ(first["correct"], false);
    EXPECT_TRUE(first["speedup"].is_null());
    EXPECT_EQ(first["score"], 0.0);
    EXPECT_EQ(first["summary"], "one pass per row");
    EXPECT_NE(first["code"].get<std::string>().find("cols - 1"), std::string::npos);
    EXPECT_EQ(second["result"]["status"], "OK") << second["result"]["error"].dump();
    EXPECT_EQ(second["correct"], true);
    EXPECT_DOUBLE_EQ(second["score"].get<double>(), rl::score(true, second["speedup"].get<double>()));
    EXPECT_TRUE(std::filesystem::exists(out / "candidates/task_softmax_small" / ("t" + std::to_string(j) + "_turn2.cpp")));

    // Turn 2 saw turn 1's code, summary and feedback line, and the one-shot example as turn 1 did.
    const std::string prompt = second["messages"][1]["content"];
    const std::string feedback = feedback_line(std::nullopt, first["result"].get<eval::EvalResult>());
    EXPECT_EQ(feedback.rfind("incorrect: ", 0), 0u) << feedback;
    EXPECT_NE(prompt.find(feedback), std::string::npos) << prompt;
    EXPECT_NE(prompt.find(first["code"].get<std::string>()), std::string::npos);
    EXPECT_NE(prompt.find("Your summary: one pass per row"), std::string::npos);
    EXPECT_EQ(prompt.find("rows are independent"), std::string::npos);  // thoughts are dropped
    EXPECT_NE(prompt.find("example of the expected answer"), std::string::npos);
    EXPECT_NE(first["messages"][1]["content"].get<std::string>().find("example of the expected answer"), std::string::npos);
  }

  // Returns and advantages are rl::'s on the recorded scores.
  std::vector<std::vector<double>> R;
  for (int j = 0; j < 2; ++j) {
    R.push_back(rl::returns({records.turn(j, 1)["score"].get<double>(), records.turn(j, 2)["score"].get<double>()}));
  }
  const auto A = rl::advantages(R);
  for (int j = 0; j < 2; ++j) {
    for (int t = 1; t <= 2; ++t) {
      const json& u = records.updates.at({j, t});
      EXPECT_EQ(u["task"], source_path(kTask));
      EXPECT_DOUBLE_EQ(u["return"].get<double>(), R[j][t - 1]);
      EXPECT_DOUBLE_EQ(u["advantage"].get<double>(), A[j][t - 1]);
    }
  }
  EXPECT_GT(R[0][0], 0);  // turn 1 is credited with the discounted later success

  auto run_json = json::parse(read_text(out / "run.json"));
  EXPECT_EQ(run_json["policy"]["kind"], "scripted");
  EXPECT_EQ(run_json["format"], "host");
  EXPECT_EQ(run_json["device"], "cpu");
}

TEST_F(RolloutRun, AResponseWithoutCodeIsAParseErrorScoredZeroAndNotEvaluated) {
  const auto out = scratch_dir() / "run";
  auto policy = policy::ScriptedPolicy::from_list({"I would tile the rows over threads."});
  auto c = config(out, 1, 2);
  c.strategy = Strategy::SERIAL;
  std::vector<trajectory::TurnRecord> kept;
  auto summary = run(c, policy, &kept);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->n_parse_errors_run, 2);
  ASSERT_EQ(kept.size(), 2u);  // the records in memory carry the typed outcome and the update
  EXPECT_EQ(kept[0].outcome, trajectory::TurnOutcome::PARSE_ERROR);
  EXPECT_EQ(kept[0].error, "no ```cpp code block found");
  EXPECT_EQ(kept[1].return_, 0.0);
  const RunRecords records = read_run(out);
  ASSERT_EQ(records.n_turn_lines, 2);
  const json& first = records.turn(0, 1);
  EXPECT_EQ(first["parse_error"], "no ```cpp code block found");
  EXPECT_TRUE(first["code"].is_null());
  EXPECT_TRUE(first["result"].is_null());
  EXPECT_EQ(first["correct"], false);
  EXPECT_EQ(first["score"], 0.0);
  EXPECT_FALSE(std::filesystem::exists(out / "candidates"));  // nothing was written or evaluated
  const std::string second_prompt = records.turn(0, 2)["messages"][1]["content"];
  EXPECT_NE(second_prompt.find("failed to parse: no ```cpp code block found"), std::string::npos) << second_prompt;
  EXPECT_EQ(records.updates.at({0, 2})["return"], 0.0);
}

// A reply that closes thoughts it never opened (the chat template opened them) and has no code
// after them: the kernel drafted in the thoughts is not evaluated, and the next prompt shows no
// thought text.
TEST_F(RolloutRun, ThoughtsClosedWithoutAnOpeningTagAreNeitherEvaluatedNorShown) {
  const auto out = scratch_dir() / "run";
  const std::string draft = "Rows are independent. A draft:\n```cpp\n" + read_text(source_path(kCorrect)) +
                            "```\nThat draft might be enough.\n</think>\nI ran out of time.";
  auto policy = policy::ScriptedPolicy::from_list({draft});
  auto c = config(out, 1, 2);
  c.strategy = Strategy::SERIAL;
  auto summary = run(c, policy);
  ASSERT_TRUE(summary) << summary.error().message;
  const RunRecords records = read_run(out);
  const json& first = records.turn(0, 1);
  EXPECT_EQ(first["parse_error"], "no ```cpp code block found");
  EXPECT_EQ(first["correct"], false);
  EXPECT_TRUE(first["result"].is_null());
  EXPECT_NE(first["response"]["reasoning"].get<std::string>().find("A draft:"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out / "candidates"));  // nothing was evaluated
  const std::string second_prompt = records.turn(0, 2)["messages"][1]["content"];
  EXPECT_EQ(second_prompt.find("That draft might be enough"), std::string::npos) << second_prompt;
  EXPECT_EQ(second_prompt.find("Rows are independent"), std::string::npos) << second_prompt;
  EXPECT_NE(second_prompt.find("failed to parse"), std::string::npos) << second_prompt;
}

TEST_F(RolloutRun, BeamKeepsTheBestAndRecordsParents) {
  const auto out = scratch_dir() / "run";
  // Round 1 (calls 0-3, one at a time): no code, correct, wrong, correct. Round 2: all correct.
  auto policy = policy::ScriptedPolicy([](const std::vector<Message>&, int call) -> common::Expected<policy::PolicyResponse> {
    policy::PolicyResponse r;
    r.finish_reason = "stop";
    if (call == 0) r.content = "no code today";
    else if (call == 2) r.content = host_answer(kOffByOne, "off by one");
    else r.content = host_answer(kCorrect, "call " + std::to_string(call));
    return r;
  });
  auto c = config(out, 4, 2);
  c.strategy = Strategy::BEAM;
  c.beam_width = 2;
  c.concurrency = 1;
  auto summary = run(c, policy);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(policy.n_calls(), 8);
  const RunRecords records = read_run(out);
  ASSERT_EQ(records.n_turn_lines, 8);
  ASSERT_EQ(records.n_update_lines, 8);

  for (int j = 0; j < 4; ++j) EXPECT_TRUE(records.turn(j, 1)["parent"].is_null());
  auto parent_of = [&](int j) {
    const json& p = records.turn(j, 2)["parent"];
    EXPECT_EQ(p["turn"], 1);
    return p["trajectory"].get<int>();
  };
  // The two correct trajectories (1 and 3) are kept, the better one first, each branched twice.
  EXPECT_EQ((std::set<int>{parent_of(0), parent_of(2)}), (std::set<int>{1, 3}));
  EXPECT_EQ(parent_of(0), parent_of(1));
  EXPECT_EQ(parent_of(2), parent_of(3));
  EXPECT_GE(records.turn(parent_of(0), 1)["score"].get<double>(), records.turn(parent_of(2), 1)["score"].get<double>());
  for (int j = 0; j < 4; ++j) {
    const std::string prompt = records.turn(j, 2)["messages"][1]["content"];
    const std::string parent_summary = records.turn(parent_of(j), 1)["summary"];
    EXPECT_NE(prompt.find("Your summary: " + parent_summary + "\n"), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("Result: correct, speedup"), std::string::npos);
  }
  // A kept turn's return averages its branches; a dropped one keeps its own score.
  const double gamma = rl::ReturnConfig{}.gamma;
  const int best = parent_of(0);
  const double expected = records.turn(best, 1)["score"].get<double>() +
                          gamma * (records.turn(0, 2)["score"].get<double>() + records.turn(1, 2)["score"].get<double>()) / 2;
  EXPECT_NEAR(records.updates.at({best, 1})["return"].get<double>(), expected, 1e-12);
  EXPECT_EQ(records.updates.at({0, 1})["return"], 0.0);
}

TEST_F(RolloutRun, ReportReadsTheRun) {
  const auto out = scratch_dir() / "run";
  auto policy = wrong_then_correct();
  auto summary = run(config(out, 2, 2), policy);
  ASSERT_TRUE(summary) << summary.error().message;
  auto report = metrics::report_from_run(out);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->warnings.empty());
  ASSERT_EQ(report->tasks.size(), 1u);
  const auto& task = report->tasks[0];
  EXPECT_EQ(task.task_id, "task_softmax_small");
  EXPECT_EQ(task.n_trajectories, 2);
  EXPECT_EQ(task.n_turns, 2);
  EXPECT_DOUBLE_EQ(task.correctness, 1.0);
  ASSERT_EQ(task.by_turn.size(), 2u);
  EXPECT_DOUBLE_EQ(task.by_turn[0].correctness, 0.0);  // only turn 2 is correct
  EXPECT_DOUBLE_EQ(task.by_turn[1].correctness, 1.0);
  EXPECT_GT(task.best_speedup, 0);
}

}  // namespace
}  // namespace kernelrl::rollout::testing
