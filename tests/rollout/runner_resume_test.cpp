// Resuming a rollout: a run cut off mid-write continues from each trajectory's last finished turn
// (its earlier attempts rebuilt from the records) without redoing a finished turn; a policy that
// fails stops the run with its turns kept; other settings are refused naming the field.
#include <gtest/gtest.h>

#include "metrics/metrics.hpp"
#include "runner_fixture.hpp"
#include "trajectory/reader.hpp"

namespace kernelrl::rollout::testing {
namespace {

using nlohmann::json;

// The first `n_lines` lines of `file`, then half of the next one (a kill mid-write).
void cut_after(const std::filesystem::path& file, int n_lines) {
  const std::string text = read_text(file);
  std::size_t end = 0;
  for (int i = 0; i < n_lines; ++i) end = text.find('\n', end) + 1;
  const std::size_t next_end = text.find('\n', end);
  write_text(file, text.substr(0, end + (next_end - end) / 2));
}

TEST_F(RolloutRun, ResumeAfterAKillRedoesNoFinishedTurn) {
  const auto out = scratch_dir() / "run";
  auto c = config(out, 2, 2);
  c.concurrency = 1;  // lines in order: (0,1) (0,2) (1,1) (1,2), then the updates
  auto first = wrong_then_correct();
  ASSERT_TRUE(run(c, first));
  ASSERT_EQ(first.n_calls(), 4);
  const RunRecords before = read_run(out);
  cut_after(out / "trajectories.jsonl", 3);

  auto second = wrong_then_correct();
  std::vector<trajectory::TurnRecord> kept;
  auto summary = run(c, second, &kept);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_TRUE(summary->resumed);
  EXPECT_EQ(second.n_calls(), 1);  // only trajectory 1's turn 2
  EXPECT_EQ(summary->n_turns_found, 3);
  EXPECT_EQ(summary->n_turns_run, 1);

  const RunRecords after = read_run(out);
  EXPECT_EQ(after.n_turn_lines, 4);  // every (trajectory, turn) exactly once
  EXPECT_EQ(after.turns.size(), 4u);
  EXPECT_EQ(after.n_update_lines, 4);
  EXPECT_EQ(after.updates.size(), 4u);
  for (int t = 1; t <= 2; ++t) EXPECT_EQ(after.turn(0, t), before.turn(0, t));  // untouched
  EXPECT_EQ(after.turn(1, 1), before.turn(1, 1));
  // The resumed turn's prompt rebuilt turn 1 from its record: code, summary, feedback line.
  const std::string prompt = after.turn(1, 2)["messages"][1]["content"];
  EXPECT_NE(prompt.find(after.turn(1, 1)["code"].get<std::string>()), std::string::npos);
  EXPECT_NE(prompt.find(feedback_line(std::nullopt, after.turn(1, 1)["result"].get<eval::EvalResult>())),
            std::string::npos);
  EXPECT_EQ(after.turn(1, 2)["correct"], true);

  // What the trainer takes in memory is what the file reads back, the earlier run's turns included.
  auto file = trajectory::read_trajectory_file(out / "trajectories.jsonl");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(kept.size(), 4u);
  ASSERT_EQ(file->records.size(), 4u);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(trajectory::to_json(kept[i]), trajectory::to_json(file->records[i])) << "record " << i;
    EXPECT_TRUE(kept[i].advantage.has_value()) << "record " << i;
  }

  auto report = metrics::report_from_run(out);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->warnings.empty());

  // Run again: nothing left to do, nothing written.
  auto third = wrong_then_correct();
  ASSERT_TRUE(run(c, third));
  EXPECT_EQ(third.n_calls(), 0);
  EXPECT_EQ(read_run(out).n_update_lines, 4);
}

TEST_F(RolloutRun, ResumeWithOtherSettingsIsRefusedNamingTheField) {
  const auto out = scratch_dir() / "run";
  auto policy = policy::ScriptedPolicy::from_list({"no code"});
  ASSERT_TRUE(run(config(out, 1, 1), policy));
  auto more = config(out, 3, 1);
  auto r = run(more, policy);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("run.json: field `trajectories` is 1 in the run but 3"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(policy.n_calls(), 1);
}

// No response from the policy is an infrastructure failure, not the model's wrong answer: the
// trajectory goes on (the next prompt says so), but the turn gets no return and no advantage, and
// the group's statistics leave it out.
TEST_F(RolloutRun, APolicyFailureIsAFinishedTurnLeftOutOfTheCredit) {
  const auto out = scratch_dir() / "run";
  auto c = config(out, 1, 3);
  c.strategy = Strategy::SERIAL;
  auto flaky = policy::ScriptedPolicy([](const std::vector<Message>&, int call) -> common::Expected<policy::PolicyResponse> {
    if (call == 1) return common::make_error("http://127.0.0.1:9/v1/chat/completions: connection refused");
    return policy::PolicyResponse{"thinking, no code", "", "stop", std::nullopt, std::nullopt, 1};
  });
  auto r = run(c, flaky);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->n_policy_errors_run, 1);
  EXPECT_EQ(r->n_turns_run, 3);
  const RunRecords records = read_run(out);
  ASSERT_EQ(records.turns.size(), 3u);
  EXPECT_EQ(records.n_update_lines, 2);
  const auto& failed = records.turn(0, 2);
  EXPECT_TRUE(failed["parse_error"].is_null());
  EXPECT_TRUE(failed["result"].is_null());
  EXPECT_EQ(failed["score"], 0.0);
  EXPECT_EQ(records.updates.count({0, 2}), 0u);  // no return, no advantage
  EXPECT_EQ(records.updates.count({0, 1}), 1u);
  EXPECT_EQ(records.updates.count({0, 3}), 1u);
  EXPECT_NE(failed["policy_error"].get<std::string>().find("http://127.0.0.1:9/v1/chat/completions"), std::string::npos);
  EXPECT_TRUE(records.turn(0, 1)["policy_error"].is_null());
  const std::string prompt = records.turn(0, 3)["messages"][1]["content"];
  EXPECT_NE(prompt.find("Attempt 2:"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("no response: http://127.0.0.1:9/v1/chat/completions: connection refused"), std::string::npos)
      << prompt;
}

// A run stopped by a policy that went down resumes by sampling its no-response turns again, with
// the turns that followed them: the records then hold answers, not failures.
TEST_F(RolloutRun, ConsecutivePolicyFailuresStopTheRunAndResumeSamplesThemAgain) {
  const auto out = scratch_dir() / "run";
  auto c = config(out, 1, 4);
  c.strategy = Strategy::SERIAL;
  c.max_policy_failures = 2;
  auto down = policy::ScriptedPolicy([](const std::vector<Message>&, int call) -> common::Expected<policy::PolicyResponse> {
    if (call >= 1) return common::make_error("http://127.0.0.1:9/v1/chat/completions: connection refused");
    return policy::PolicyResponse{"thinking, no code", "", "stop", std::nullopt, std::nullopt, 1};
  });
  auto r = run(c, down);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("2 turns in a row"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("connection refused"), std::string::npos) << r.error().message;
  EXPECT_EQ(down.n_calls(), 3);
  EXPECT_EQ(read_run(out).n_turn_lines, 3);
  EXPECT_EQ(read_run(out).n_update_lines, 0);  // the task is not complete

  auto steady = policy::ScriptedPolicy::from_list({"still no code"});
  auto resumed = run(c, steady);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(steady.n_calls(), 3);  // turns 2 and 3 (no response) again, then turn 4
  EXPECT_EQ(resumed->n_policy_errors_resampled, 2);
  EXPECT_EQ(resumed->n_turns_found, 1);
  const RunRecords records = read_run(out);
  EXPECT_EQ(records.turns.size(), 4u);
  EXPECT_EQ(records.n_update_lines, 4);
  for (int t = 1; t <= 4; ++t) EXPECT_TRUE(records.turn(0, t)["policy_error"].is_null()) << "turn " << t;
  const std::string prompt = records.turn(0, 4)["messages"][1]["content"];
  EXPECT_NE(prompt.find("Attempt 3:"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("no response: "), std::string::npos) << prompt;
}

// The number of earlier attempts a prompt shows: the "context" of the scripted policy below.
std::size_t attempts_shown(const std::vector<Message>& messages) {
  std::size_t n = 0;
  const std::string& user = messages.back().content;
  for (auto at = user.find("\nAttempt "); at != std::string::npos; at = user.find("\nAttempt ", at + 1)) ++n;
  return n;
}

// A policy whose context holds one earlier attempt (its "tokens" count attempts): the runner drops
// the oldest so that every prompt fits, and the policy never refuses one.
TEST_F(RolloutRun, PromptsAreBoundedInThePolicysTokens) {
  const auto out = scratch_dir() / "run";
  auto c = config(out, 1, 3);
  c.strategy = Strategy::SERIAL;
  auto policy = policy::ScriptedPolicy::from_list({"thinking, no code"});
  policy.set_token_budget({1, attempts_shown});
  auto r = run(c, policy);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->n_policy_errors_run, 0);
  EXPECT_EQ(r->n_prompts_too_long_run, 0);
  const RunRecords records = read_run(out);
  const std::string third = records.turn(0, 3)["messages"][1]["content"];
  EXPECT_EQ(third.find("Attempt 1:"), std::string::npos) << third;  // the oldest is dropped
  EXPECT_NE(third.find("Attempt 2:"), std::string::npos) << third;
  EXPECT_EQ(records.n_update_lines, 3);
}

// A task whose own prompt is over the budget: no turn is sent, none counts as the policy's failure
// (the run does not stop as if the server were down), and none is credited; a rerun has nothing left.
TEST_F(RolloutRun, APromptThatCannotFitIsNeverSentNorScoredAsTheModels) {
  const auto out = scratch_dir() / "run";
  auto c = config(out, 2, 2);
  c.max_policy_failures = 2;
  auto policy = policy::ScriptedPolicy::from_list({"thinking, no code"});
  auto chars = [](const std::vector<Message>& messages) {
    std::size_t n = 0;
    for (const auto& m : messages) n += m.content.size();
    return n;
  };
  policy.set_token_budget({100, chars});
  auto r = run(c, policy);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(policy.n_calls(), 0);
  EXPECT_EQ(r->n_prompts_too_long_run, 4);
  EXPECT_EQ(r->n_policy_errors_run, 0);
  const RunRecords records = read_run(out);
  ASSERT_EQ(records.n_turn_lines, 4);
  EXPECT_EQ(records.n_update_lines, 0);  // no return, no advantage: nothing of it is trained on
  const auto& first = records.turn(0, 1);
  EXPECT_NE(first["prompt_error"].get<std::string>().find("more than the budget of 100"), std::string::npos)
      << first["prompt_error"];
  EXPECT_TRUE(first["policy_error"].is_null());
  EXPECT_TRUE(first["advantage"].is_null());
  EXPECT_EQ(records.turn(1, 2)["messages"][1]["content"].get<std::string>().find("Attempt 1:"), std::string::npos);

  auto again = run(c, policy);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->n_turns_run, 0);
  EXPECT_EQ(read_run(out).n_update_lines, 0);
}

TEST_F(RolloutRun, AnEvaluatorThatCannotEvaluateStopsTheRun) {
  struct Broken final : Evaluator {
    common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override {
      return common::make_error(job.task.string() + ": the task does not load");
    }
    std::string device() const override { return "cpu"; }
  } broken;
  const auto out = scratch_dir() / "run";
  auto c = config(out, 1, 3);
  c.strategy = Strategy::SERIAL;
  auto policy = wrong_then_correct();
  auto r = rollout::RolloutRunner(c, policy, broken).run();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("could not evaluate"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("the task does not load"), std::string::npos) << r.error().message;
  EXPECT_EQ(policy.n_calls(), 1);
  EXPECT_EQ(read_run(out).n_turn_lines, 0);
}

}  // namespace
}  // namespace kernelrl::rollout::testing
