// `run_training` end to end on the CPU with a tiny random model of SmolLM2's vocabulary, the
// shipped SmolLM2 tokenizer and the format reward: the step rollouts, the step log, the
// checkpoints and the run state are written; a rerun resumes after the finished steps, and a rerun
// with other settings is refused naming the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "model/transformer.hpp"
#include "train/trainer.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = KERNELRL_SOURCE_DIR;

fs::path scratch() {
  auto p = fs::temp_directory_path() / ("kernelrl-trainer-test-" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

fs::path tiny_checkpoint(const fs::path& dir, std::uint64_t seed = 3, std::int64_t max_position = 8192) {
  auto c = model::testing::tiny_config(/*tied=*/true);
  c.vocab_size = 49152;  // SmolLM2's tokenizer
  c.max_position = max_position;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  torch::manual_seed(seed);
  auto m = model::make_transformer(c);
  EXPECT_TRUE(m) << m.error().message;
  auto saved = weights::save_hf_checkpoint(dir, c, (*m)->state(), "float32");
  EXPECT_TRUE(saved) << saved.error().message;
  return dir;
}

int count_lines(const fs::path& file) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// A 2-step format-reward run of the tiny model over one task, 4 trajectories x 2 turns.
TrainConfig tiny_run(const fs::path& root) {
  TrainConfig c;
  c.model = tiny_checkpoint(root / "tiny");
  c.tokenizer = kSource / "tests/data/tokenizer/smollm2";
  c.device = "cpu";
  c.run_dir = root / "run";
  c.n_steps = 2;
  c.tasks_per_step = 1;
  c.reward = "format";
  c.rollout.tasks = {kSource / "tests/ladder/task_softmax_small.py"};
  c.rollout.split = "all";
  c.rollout.format = common::Format::NATIVE;
  c.rollout.n_trajectories = 4;
  c.rollout.n_turns = 2;
  c.policy.sampling.max_new_tokens = 16;
  c.update.grpo.max_response_tokens = 16;
  c.activation_checkpointing = false;
  c.rollout.out_dir = c.run_dir / "steps";  // each step writes its own folder under it
  auto resolved = rollout::resolve(c.rollout);
  EXPECT_TRUE(resolved) << resolved.error().message;
  if (resolved) c.rollout = *resolved;
  return c;
}

TEST(Trainer, RunsStepsWritesCheckpointsAndResumes) {
  const fs::path root = scratch();
  TrainConfig c = tiny_run(root);

  auto first = run_training(c, nullptr);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->steps_done_before, 0);
  EXPECT_EQ(first->steps_run, 2);
  EXPECT_EQ(count_lines(c.run_dir / "train_log.jsonl"), 2);
  EXPECT_EQ(count_lines(c.run_dir / "steps/step-00001/trajectories.jsonl") >= 8, true);
  std::ifstream log(c.run_dir / "train_log.jsonl");
  std::string line;
  std::getline(log, line);
  auto metrics = nlohmann::json::parse(line);
  for (const char* key : {"reward/mean", "eval/correct_rate", "response/mean_tokens", "response/degenerate_frac",
                          "train/clip_frac", "train/approx_kl", "train/entropy", "train/grad_norm", "time/rollout_s"}) {
    EXPECT_TRUE(metrics.contains(key)) << key;
  }
  EXPECT_EQ(metrics["n_episodes"], 8);
  EXPECT_GT(metrics["response/mean_tokens"].get<double>(), 0);  // the sampled tokens reach the trainer
  EXPECT_TRUE(fs::exists(c.run_dir / "checkpoints/step-00002/model.safetensors"));
  EXPECT_TRUE(fs::exists(c.run_dir / "checkpoints/step-00002/optimizer.pt"));
  EXPECT_FALSE(fs::exists(c.run_dir / "checkpoints/step-00001"));  // only the latest is kept

  c.n_steps = 3;  // extending a run resumes after its finished steps
  auto second = run_training(c, nullptr);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->steps_done_before, 2);
  EXPECT_EQ(second->steps_run, 1);
  EXPECT_EQ(count_lines(c.run_dir / "train_log.jsonl"), 3);

  c.lr = 1e-3;
  auto other = run_training(c, nullptr);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("lr"), std::string::npos) << other.error().message;
  fs::remove_all(root);
}

// Every setting is compared on resume (train.json is derived from the config structs member by
// member); only n_steps may grow, and settings of speed or memory alone may change.
TEST(Trainer, ResumeRefusesAnyOtherSetting) {
  const fs::path root = scratch() / "settings";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  auto first = run_training(c, nullptr);
  ASSERT_TRUE(first) << first.error().message;
  const std::vector<std::pair<std::string, std::function<void(TrainConfig&)>>> changes = {
      {"rollout.return.kind", [](TrainConfig& t) { t.rollout.returns.kind = rl::ReturnKind::DISCOUNTED_MAX; }},
      {"rollout.score.speedup_cap", [](TrainConfig& t) { t.rollout.score.speedup_cap = 3.0; }},
      {"rollout.advantage.divide_by_std", [](TrainConfig& t) { t.rollout.advantage.divide_by_std = false; }},
      {"rollout.advantage.eps", [](TrainConfig& t) { t.rollout.advantage.eps = 1e-4; }},
      {"rollout.prompt.max_tokens", [](TrainConfig& t) { t.rollout.prompt.max_tokens = 4000; }},
      {"rollout.prompt.gpu", [](TrainConfig& t) { t.rollout.prompt.gpu = "an NVIDIA B200"; }},
      {"rollout.strategy", [](TrainConfig& t) { t.rollout.strategy = rollout::Strategy::SERIAL; }},
      {"optimizer.adam_betas", [](TrainConfig& t) { t.adam_beta2 = 0.99; }},
      {"update.skip_zero_advantage", [](TrainConfig& t) { t.update.skip_zero_advantage = false; }},
      {"update.grpo.kl_coef", [](TrainConfig& t) { t.update.grpo.kl_coef = 0.01; }},
      {"policy.top_p", [](TrainConfig& t) { t.policy.sampling.top_p = 0.95; }},
  };
  for (const auto& [field, change] : changes) {
    TrainConfig other = c;
    change(other);
    auto r = run_training(other, nullptr);
    ASSERT_FALSE(r) << field << " was accepted";
    EXPECT_NE(r.error().message.find("`" + field + "`"), std::string::npos) << r.error().message;
  }
  TrainConfig same = c;
  same.n_steps = 2;
  same.update.micro_batch_tokens = 512;
  same.activation_checkpointing = true;
  same.rollout.concurrency = 3;
  auto resumed = run_training(same, nullptr);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(resumed->steps_done_before, 1);
  fs::remove_all(root);
}

// A run that could not load its model leaves no settings behind: the corrected command starts.
TEST(Trainer, AFailedStartDoesNotPinTheSettings) {
  const fs::path root = scratch() / "failed-start";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  const fs::path good = c.model;
  c.model = root / "no-such-model.gguf";
  auto failed = run_training(c, nullptr);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("no-such-model.gguf"), std::string::npos) << failed.error().message;
  EXPECT_FALSE(fs::exists(c.run_dir / "train.json"));
  c.model = good;
  auto started = run_training(c, nullptr);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(started->steps_run, 1);
  EXPECT_TRUE(fs::exists(c.run_dir / "train.json"));
  fs::remove_all(root);
}

std::vector<nlohmann::json> read_log(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// --kl-coef loads a frozen reference from --model: the KL is 0 while the policy is the starting
// one, and a resumed run measures it against the starting model, not against the checkpoint it
// resumes from (here replaced by another model, so the two differ).
TEST(Trainer, TheKlTermIsMeasuredAgainstTheStartingPolicy) {
  const fs::path root = scratch() / "kl";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  c.rollout.n_trajectories = 2;  // with a KL term every sample is trained on: keep the CPU update short
  c.update.grpo.kl_coef = 0.1;
  auto first = run_training(c, nullptr);
  ASSERT_TRUE(first) << first.error().message;
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 1u);
  ASSERT_TRUE(log[0].contains("train/kl_to_ref")) << log[0].dump();
  EXPECT_LT(log[0]["train/kl_to_ref"].get<double>(), 1e-9);  // the policy is still the reference

  const fs::path checkpoint = c.run_dir / "checkpoints/step-00001";
  ASSERT_TRUE(fs::exists(checkpoint / "model.safetensors"));
  fs::remove(checkpoint / "optimizer.pt");
  tiny_checkpoint(checkpoint, /*seed=*/4);
  c.n_steps = 2;
  auto second = run_training(c, nullptr);
  ASSERT_TRUE(second) << second.error().message;
  log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_GT(log[1]["train/kl_to_ref"].get<double>(), 1e-3);
  fs::remove_all(root);
}

// A model whose context cannot hold the task's prompt: no turn is sent (before, each was a policy
// error scored 0, and eight in a row stopped the step as if a server were down); the step
// finishes, trains on nothing, and says how many prompts did not fit.
TEST(Trainer, PromptsOverTheModelsContextAreNotTheModelsFailures) {
  const fs::path root = scratch() / "short-context";
  TrainConfig c = tiny_run(root);
  c.model = tiny_checkpoint(root / "short", 3, /*max_position=*/256);
  c.n_steps = 1;
  auto r = run_training(c, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["rollout/n_prompts_too_long"], 8);
  EXPECT_EQ(log[0]["train/n_samples"], 0);
  EXPECT_EQ(log[0]["response/degenerate_frac"], 0.0);
  fs::remove_all(root);
}

TEST(Trainer, BadSettingsAreNamed) {
  TrainConfig c;
  c.model = "m.gguf";
  c.run_dir = "/tmp/x";
  c.reward = "vibes";
  auto r = run_training(c, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("vibes"), std::string::npos);
  c.reward = "kernel";
  r = run_training(c, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("engine"), std::string::npos);
  c.reward = "format";
  c.update.grpo.kl_coef = -0.1;
  r = run_training(c, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("--kl-coef"), std::string::npos) << r.error().message;
  c.update.grpo.kl_coef = 0;
  c.policy.sampling.temperature = 0;
  r = run_training(c, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("--temperature"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kernelrl::train
