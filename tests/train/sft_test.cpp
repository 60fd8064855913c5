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
  auto expected = rollout::build_prompt(*templates, *source, {}, 1, config.prompt);
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

}  // namespace
}  // namespace kernelrl::train
