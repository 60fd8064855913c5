// Prompts per the recipe: one-shot in turn 1 only, earlier attempts with code, summary and one
// feedback line (never thoughts), the restart instruction, oldest attempts dropped first.
#include "rollout/prompt.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace kernelrl::rollout {
namespace {

PromptTemplates shipped(common::Format format) {
  const std::string root = KERNELRL_SOURCE_DIR;
  auto t = load_templates(root + "/prompts", format, root + "/examples/vector_add/native.cu");
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : PromptTemplates{};
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

eval::EvalResult outcome(common::Status status, const std::string& message) {
  eval::EvalResult r;
  r.status = status;
  r.error.message = message;
  return r;
}

TEST(Prompt, TurnOneHasTheTaskTheRulesAndTheExample) {
  auto p = build_prompt(shipped(common::Format::NATIVE), "class Model: pass  # {code}", {});
  ASSERT_EQ(p.messages.size(), 2u);
  const std::string& user = p.messages[1].content;
  EXPECT_NE(user.find("class Model: pass  # {code}"), std::string::npos);  // braces in the task stay
  EXPECT_NE(user.find("kernelrl_forward"), std::string::npos);
  EXPECT_NE(user.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(user.find("example of the expected answer"), std::string::npos);
  EXPECT_EQ(user.find("previous attempts"), std::string::npos);
}

TEST(Prompt, LaterTurnsShowAttemptsFeedbackAndRestartAndKeepTheExample) {
  std::vector<Attempt> previous{
      {"__global__ void a() {}", "first try", feedback_line(std::nullopt, outcome(common::Status::WRONG_OUTPUT, "output 0: 3 elements differ"))},
      {"__global__ void b() {}", "", feedback_line(std::string("no ```cuda code block found"), {})}};
  auto p = build_prompt(shipped(common::Format::NATIVE), "TASK", previous);
  const std::string& user = p.messages[1].content;
  const std::string first = build_prompt(shipped(common::Format::NATIVE), "TASK", {}).messages[1].content;
  EXPECT_EQ(user.rfind(first, 0), 0u) << "a later turn's prompt is turn 1's (example kept) with the attempts after it";
  EXPECT_NE(user.find("Attempt 1:"), std::string::npos);
  EXPECT_NE(user.find("__global__ void a() {}"), std::string::npos);
  EXPECT_NE(user.find("Your summary: first try"), std::string::npos);
  EXPECT_NE(user.find("incorrect: output 0: 3 elements differ"), std::string::npos);
  EXPECT_NE(user.find("failed to parse: no ```cuda code block found"), std::string::npos);
  EXPECT_NE(user.find("Think again from the start"), std::string::npos);
  EXPECT_EQ(p.n_attempts_shown, 2);
}

TEST(Prompt, FeedbackLinesByOutcome) {
  eval::EvalResult ok = outcome(common::Status::OK, "");
  ok.speedup = 1.5;
  ok.runtime_us = 100;
  ok.ref_runtime_us = 150;
  EXPECT_EQ(feedback_line(std::nullopt, ok), "correct, speedup 1.50x over PyTorch eager (100.0 us vs 150.0 us)");
  // Not timed (--no-timing, or a reward that does not run the code): no made-up speedup of 0.
  eval::EvalResult untimed = outcome(common::Status::OK, "");
  EXPECT_EQ(feedback_line(std::nullopt, untimed), "correct (not timed)");
  untimed.error.message = "format reward, the code was not compiled or run: 2 of 4 markers";
  EXPECT_EQ(feedback_line(std::nullopt, untimed), "correct (not timed): format reward, the code was not compiled or run: 2 of 4 markers");
  auto ce = outcome(common::Status::COMPILE_ERROR, "k.cu:3: error: x undefined");
  ce.error.compile_log = "k.cu(3): error: identifier \"x\" is undefined";
  EXPECT_NE(feedback_line(std::nullopt, ce).find("failed to compile: k.cu:3"), std::string::npos);
  EXPECT_NE(feedback_line(std::nullopt, ce).find("identifier"), std::string::npos);
  EXPECT_EQ(feedback_line(std::nullopt, outcome(common::Status::TIMEOUT, "ran too long")), "timed out: ran too long");
  EXPECT_EQ(feedback_line(std::nullopt, outcome(common::Status::REJECTED, "cuBLAS")), "rejected: cuBLAS");
  EXPECT_EQ(feedback_line(std::nullopt, outcome(common::Status::RUNTIME_ERROR, "SIGSEGV")), "runtime error: SIGSEGV");
}

// The same compile error reads the same whichever caller evaluated it: rollout (t0_turn2.cpp in
// the run folder), env (candidate.cpp) or the service (the client's name in a job folder).
TEST(Prompt, FeedbackNamesTheCandidateTheSameWayForEveryCaller) {
  auto compile_error = [](const std::string& candidate, const std::string& dir) {
    auto r = outcome(common::Status::COMPILE_ERROR, candidate + ": the compiler failed");
    r.candidate = dir + candidate;
    r.error.compile_log = dir + candidate + ":3:5: error: 'x' was not declared\n  included from " + dir + candidate + ":1";
    return feedback_line(std::nullopt, r);
  };
  const std::string rollout = compile_error("t0_turn2.cpp", "/runs/r1/trajectories/");
  EXPECT_EQ(rollout, compile_error("candidate.cpp", "/tmp/kernelrl-env-x/"));
  EXPECT_EQ(rollout, compile_error("candidate_0.cpp", "/var/kernelrl/jobs/17/"));
  EXPECT_EQ(rollout,
            "failed to compile: candidate.cpp: the compiler failed\ncandidate.cpp:3:5: error: 'x' was not declared\n"
            "  included from candidate.cpp:1");
  // Only the file itself: not a longer name that ends or begins with it.
  auto wrong = outcome(common::Status::WRONG_OUTPUT, "my_t0_turn2.cu and t0_turn2.cuh are not t0_turn2.cu");
  wrong.candidate = "runs/t0_turn2.cu";
  EXPECT_EQ(feedback_line(std::nullopt, wrong), "incorrect: my_t0_turn2.cu and t0_turn2.cuh are not candidate.cu");
}

TEST(Prompt, OldestAttemptsAreDroppedToFitTheBudget) {
  std::vector<Attempt> previous;
  for (int i = 0; i < 6; ++i) previous.push_back({std::string(2000, 'a' + i), "s", "incorrect"});
  PromptConfig small;
  small.max_chars = 9000;
  auto p = build_prompt(shipped(common::Format::NATIVE), "TASK", previous, small);
  EXPECT_GT(p.n_attempts_dropped, 0);
  EXPECT_EQ(p.n_attempts_shown + p.n_attempts_dropped, 6);
  const std::string& user = p.messages[1].content;
  EXPECT_EQ(user.find(std::string(100, 'a')), std::string::npos);  // the oldest is gone
  EXPECT_NE(user.find(std::string(100, 'f')), std::string::npos);  // the newest stays
  EXPECT_NE(user.find("Attempt 6:"), std::string::npos);           // numbered by turn
}

// A token budget drops the oldest attempts until the prompt, counted in the policy's tokens, fits;
// a prompt that does not fit even without attempts says so.
TEST(Prompt, OldestAttemptsAreDroppedToFitTheTokenBudget) {
  std::vector<Attempt> previous;
  for (int i = 0; i < 6; ++i) previous.push_back({std::string(2000, 'a' + i), "s", "incorrect"});
  auto count = [](const std::vector<Message>& messages) {  // a token per 4 characters
    std::size_t n = 0;
    for (const auto& m : messages) n += m.content.size() / 4;
    return n;
  };
  const auto templates = shipped(common::Format::NATIVE);
  PromptConfig no_chars;
  no_chars.max_chars = 0;  // only the tokens bound it
  const auto all = build_prompt(templates, "TASK", previous, no_chars);
  EXPECT_EQ(all.n_attempts_shown, 6);
  const policy::TokenBudget budget{count(all.messages) - 1000, count};  // two attempts' worth too many
  const auto p = build_prompt(templates, "TASK", previous, no_chars, &budget);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.n_attempts_dropped, 2);
  EXPECT_EQ(p.n_attempts_shown, 4);
  ASSERT_TRUE(p.n_tokens.has_value());
  EXPECT_EQ(*p.n_tokens, count(p.messages));
  EXPECT_LE(*p.n_tokens, budget.max_tokens);
  EXPECT_EQ(p.messages[1].content.find(std::string(100, 'b')), std::string::npos);  // the two oldest are gone
  EXPECT_NE(p.messages[1].content.find(std::string(100, 'c')), std::string::npos);
  EXPECT_NE(p.messages[1].content.find("Attempt 6:"), std::string::npos);

  const policy::TokenBudget tiny{10, count};
  const auto none = build_prompt(templates, "TASK", previous, no_chars, &tiny);
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.n_attempts_shown, 0);
  EXPECT_GT(*none.n_tokens, 10u);
}

// The target and the one-shot example's summary follow the format: a host prompt names the CPU,
// not a GPU, and no caption describes a GPU kernel above a CPU loop; the captions are template files.
TEST(Prompt, TheTargetAndTheExampleSummaryFollowTheFormat) {
  const std::string root = KERNELRL_SOURCE_DIR;
  auto host = load_templates(root + "/prompts", common::Format::HOST, root + "/examples/vector_add/host.cpp");
  ASSERT_TRUE(host) << host.error().message;
  const std::string host_prompt = build_prompt(*host, "TASK", {}).messages[1].content;
  EXPECT_EQ(host_prompt.find("H200"), std::string::npos) << host_prompt;
  EXPECT_EQ(host_prompt.find("GPU"), std::string::npos) << host_prompt;
  EXPECT_NE(host_prompt.find("runs on the CPU"), std::string::npos) << host_prompt;
  EXPECT_EQ(host_prompt.find("grid-stride"), std::string::npos) << host_prompt;
  EXPECT_NE(host->example.find(read(root + "/prompts/example_summary_host.txt")), std::string::npos) << host->example;

  PromptConfig b200;
  b200.gpu = "an NVIDIA B200";
  for (auto format : {common::Format::NATIVE, common::Format::KERNELBENCH}) {
    const std::string name(common::to_string(format));
    const std::string example = root + (format == common::Format::NATIVE ? "/examples/vector_add/native.cu"
                                                                          : "/examples/vector_add/kernelbench.py");
    auto t = load_templates(root + "/prompts", format, example);
    ASSERT_TRUE(t) << t.error().message;
    const std::string prompt = build_prompt(*t, "TASK", {}, b200).messages[1].content;
    EXPECT_NE(prompt.find("runs on an NVIDIA B200"), std::string::npos) << name << ": " << prompt;
    EXPECT_EQ(prompt.find("{gpu}"), std::string::npos) << name;
    EXPECT_NE(t->example.find(read(root + "/prompts/example_summary_" + name + ".txt")), std::string::npos) << name;
  }
}

TEST(Prompt, MissingTemplatesAreNamed) {
  auto t = load_templates("/nonexistent/prompts", common::Format::HOST, "/nonexistent/example.cpp");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("/nonexistent/prompts/system.txt"), std::string::npos) << t.error().message;
}

}  // namespace
}  // namespace kernelrl::rollout
