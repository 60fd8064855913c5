// The supervised warm start (train/sft.hpp): pairs are the rollout's own turn-1 prompts with the
// fenced correct solution, held-out tasks are refused, and training lowers the answers'
// negative log-likelihood (a tiny random model of SmolLM2's vocabulary on the CPU).
#include "train/sft.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "common/fs.hpp"
#include "model/transformer.hpp"
#include "rollout/response_parser.hpp"
#include "train/sft_refinement.hpp"
#include "trajectory/record.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = KERNELRL_SOURCE_DIR;

fs::path scratch() {
  auto p = fs::temp_directory_path() / ("kernelrl-sft-test-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

rollout::RolloutConfig starter(const std::vector<fs::path>& tasks, const std::string& split) {
  rollout::RolloutConfig c;
  c.tasks = tasks;
  c.split = split;
  c.format = common::Format::NATIVE;
  c.prompt.max_chars = 0;
  c.out_dir = fs::temp_directory_path() / "kernelrl-sft-test-unused";  // resolve() wants one; nothing is written
  auto resolved = rollout::resolve(c);
  EXPECT_TRUE(resolved) << resolved.error().message;
  return resolved ? *resolved : c;
}

TEST(Sft, PairsAreTheRolloutsPromptsWithTheFencedSolutionOfTrainTasksOnly) {
  const auto config = starter({kSource / "tasks/starter"}, "train");
  int missing = -1;
  auto pairs = make_sft_pairs(config, kSource / "tasks/fixtures/starter", &missing);
  ASSERT_TRUE(pairs) << pairs.error().message;
  EXPECT_EQ(pairs->size(), 36u);
  EXPECT_EQ(missing, 0);
  const auto& abs = pairs->front();
  EXPECT_EQ(abs.task_id, "001_abs");
  // The prompt is the rollout's turn-1 prompt for the task, byte for byte.
  auto templates = rollout::load_templates(config.templates_dir, config.format, config.example_file);
  ASSERT_TRUE(templates) << templates.error().message;
  auto source = common::read_file(kSource / "tasks/starter/001_abs.py", 1 << 20);
  ASSERT_TRUE(source);
  auto expected = rollout::build_prompt(*templates, *source, {}, config.prompt);
  ASSERT_EQ(abs.prompt.size(), expected.messages.size());
  for (std::size_t i = 0; i < abs.prompt.size(); ++i) EXPECT_EQ(abs.prompt[i].content, expected.messages[i].content);
  // The answer: the solution fenced (without its header comment), then its approach as the summary.
  EXPECT_EQ(abs.answer.rfind("```cuda\n#include <kernelrl/abi.h>\n", 0), 0u) << abs.answer.substr(0, 200);
  EXPECT_NE(abs.answer.find("out[i] = fabsf(v);"), std::string::npos);
  EXPECT_NE(abs.answer.find("```\nGrid-stride element-wise kernel"), std::string::npos) << abs.answer;
  for (const auto& p : *pairs) EXPECT_EQ(p.task_id.find("_sin"), std::string::npos) << "a held-out op in the pairs";
  // What the model learns to write is what the rollout's (strict) parser takes: the whole solution
  // as the code, the approach as the summary.
  for (const auto& p : *pairs) {
    auto parsed = rollout::parse_response(p.answer, "", common::Format::NATIVE);
    ASSERT_TRUE(parsed.ok) << p.task_id << ": " << parsed.error;
    EXPECT_NE(parsed.code.find("extern \"C\" int kernelrl_forward("), std::string::npos) << p.task_id;
    EXPECT_FALSE(parsed.summary.empty()) << p.task_id;
  }

  // A held-out task is refused, by name.
  auto all = make_sft_pairs(starter({kSource / "tasks/starter"}, "all"), kSource / "tasks/fixtures/starter", nullptr);
  ASSERT_FALSE(all);
  EXPECT_NE(all.error().message.find("005_sin.py: a held-out (test split) task"), std::string::npos) << all.error().message;
  // No solution at all: an error naming the folder.
  auto none = make_sft_pairs(config, kSource / "tasks/level1", nullptr);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("has a solution in"), std::string::npos) << none.error().message;
}

TEST(Sft, TrainingLowersTheAnswersNegativeLogLikelihoodAndWritesACheckpoint) {
  const fs::path root = scratch();
  auto mc = model::testing::tiny_config(/*tied=*/true);
  mc.vocab_size = 49152;  // SmolLM2's tokenizer
  mc.max_position = 8192;
  mc.bos_token_id = 1;
  mc.eos_token_id = 2;
  torch::manual_seed(5);
  auto m = model::make_transformer(mc);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(weights::save_hf_checkpoint(root / "tiny", mc, (*m)->state(), "float32"));

  SftConfig c;
  c.model = root / "tiny";
  c.tokenizer = kSource / "tests/data/tokenizer/smollm2";
  c.device = "cpu";
  c.tasks = starter({kSource / "tasks/starter/001_abs.py", kSource / "tasks/starter/042_row_sum.py"}, "train");
  c.solutions = kSource / "tasks/fixtures/starter";
  c.out_dir = root / "sft";
  c.n_steps = 8;
  c.batch = 2;
  c.lr = 1e-2;
  c.activation_checkpointing = false;
  auto summary = run_sft(c);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->n_pairs, 2);
  EXPECT_EQ(summary->steps_run, 8);
  EXPECT_GT(summary->first_nll, 5.0);  // a random model: near log(vocab) per token
  EXPECT_LT(summary->last_nll, summary->first_nll - 2.0) << "nats per answer token";
  EXPECT_TRUE(fs::exists(root / "sft/checkpoint/config.json"));
  std::ifstream log(root / "sft/sft_log.jsonl");
  int lines = 0;
  for (std::string l; std::getline(log, l);) lines += !l.empty();
  EXPECT_EQ(lines, 8);

  // A finished warm start is never overwritten.
  auto again = run_sft(c);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("a finished warm start is here"), std::string::npos) << again.error().message;
  fs::remove_all(root);
}

// Refinement pairs: the rollout's own prompt for turn t + 1 after a real failed attempt at turn t
// (the attempts before it in its trajectory included), answered with the solution; correct turns,
// turns without an answer, held-out tasks and turns at the last turn give none.
TEST(Sft, RefinementPairsAreTheRolloutsLaterPromptsAfterRealFailedAttempts) {
  const fs::path root = scratch();
  const auto config = starter({kSource / "tasks/starter"}, "all");
  const std::string abs_task = (kSource / "tasks/starter/001_abs.py").string();
  auto record = [](const std::string& task, const std::string& id, int trajectory, int turn) {
    trajectory::TurnRecord r;
    r.task = task;
    r.task_id = id;
    r.trajectory = trajectory;
    r.turn = turn;
    return r;
  };
  auto failed = [&](const std::string& task, const std::string& id, int trajectory, int turn,
                    trajectory::TurnOutcome outcome, const std::string& error) {
    auto r = record(task, id, trajectory, turn);
    r.outcome = outcome;
    r.error = error;
    return r;
  };
  const auto parse_error = trajectory::TurnOutcome::PARSE_ERROR;
  std::vector<trajectory::TurnRecord> records;
  records.push_back(failed(abs_task, "001_abs", 0, 1, parse_error, "no ```cuda code block found"));
  auto wrong = record(abs_task, "001_abs", 0, 2);
  wrong.outcome = trajectory::TurnOutcome::EVALUATED;
  wrong.code = "extern \"C\" int kernelrl_forward() { return 0; }";
  wrong.summary = "did nothing";
  wrong.result = nlohmann::json{{"status", "WRONG_OUTPUT"}, {"error", {{"message", "output 0 differs at [0]"}}}};
  records.push_back(wrong);
  auto right = record(abs_task, "001_abs", 1, 1);
  right.outcome = trajectory::TurnOutcome::EVALUATED;
  right.correct = true;
  right.code = "ok";
  right.result = nlohmann::json{{"status", "OK"}};
  records.push_back(right);
  records.push_back(failed(abs_task, "001_abs", 2, 1, trajectory::TurnOutcome::POLICY_ERROR,
                           "http://127.0.0.1:9: connection refused"));
  records.push_back(failed((kSource / "tasks/starter/005_sin.py").string(), "005_sin", 0, 1, parse_error, "no code"));
  records.push_back(failed(abs_task, "001_abs", 3, 4, parse_error, "no code"));  // the last turn
  {
    std::ofstream out(root / "trajectories.jsonl");
    for (const auto& r : records) out << trajectory::to_json(r).dump() << "\n";
  }
  auto pairs = make_refinement_pairs(config, kSource / "tasks/fixtures/starter", root, 4);
  ASSERT_TRUE(pairs) << pairs.error().message;
  ASSERT_EQ(pairs->size(), 2u);
  auto templates = rollout::load_templates(config.templates_dir, config.format, config.example_file);
  ASSERT_TRUE(templates) << templates.error().message;
  auto source = common::read_file(abs_task, 1 << 20);
  ASSERT_TRUE(source);
  const rollout::Attempt first{"", "", "failed to parse: no ```cuda code block found"};
  const auto& second_turn = (*pairs)[0];
  EXPECT_EQ(second_turn.turn, 2);
  auto expected = rollout::build_prompt(*templates, *source, {first}, config.prompt);
  ASSERT_EQ(second_turn.prompt.size(), expected.messages.size());
  for (std::size_t i = 0; i < expected.messages.size(); ++i) {
    EXPECT_EQ(second_turn.prompt[i].content, expected.messages[i].content);
  }
  const auto& third_turn = (*pairs)[1];
  EXPECT_EQ(third_turn.turn, 3);
  const std::string user = third_turn.prompt.back().content;
  EXPECT_NE(user.find("Attempt 1:"), std::string::npos) << user;
  EXPECT_NE(user.find("Attempt 2:"), std::string::npos) << user;
  EXPECT_NE(user.find("incorrect: output 0 differs at [0]"), std::string::npos) << user;
  EXPECT_NE(user.find("did nothing"), std::string::npos) << user;
  EXPECT_EQ(third_turn.answer, (*make_sft_pairs(starter({kSource / "tasks/starter/001_abs.py"}, "train"),
                                                kSource / "tasks/fixtures/starter", nullptr))[0].answer);
  // Nothing to learn from: an error naming the file.
  std::ofstream(root / "trajectories.jsonl") << trajectory::to_json(right).dump() << "\n";
  auto none = make_refinement_pairs(config, kSource / "tasks/fixtures/starter", root, 4);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("trajectories.jsonl: no failed attempt"), std::string::npos) << none.error().message;
  fs::remove_all(root);
}

}  // namespace
}  // namespace kernelrl::train
