// `run_training` end to end on the CPU with a tiny random model of SmolLM2's vocabulary, the
// shipped SmolLM2 tokenizer and the format reward: the step rollouts, the step log, the
// checkpoints and the run state are written; a rerun resumes after the finished steps, and a rerun
// with other settings is refused naming the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <tuple>
#include <fstream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "tiny_policy.hpp"
#include "model/transformer.hpp"
#include "rollout/evaluator.hpp"
#include "train/trainer.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = KERNELRL_SOURCE_DIR;
using testing::tiny_checkpoint;

fs::path scratch() {
  auto p = fs::temp_directory_path() / ("kernelrl-trainer-test-" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
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

std::vector<nlohmann::json> read_log(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
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

  // Killed after step 3's log line but before train_state.json said so: the resume redoes step 3
  // and its line is not there twice.
  std::ofstream(c.run_dir / "train_state.json") << R"({"steps_done": 2, "checkpoint": "checkpoints/step-00003"})";
  auto redone = run_training(c, nullptr);
  ASSERT_TRUE(redone) << redone.error().message;
  EXPECT_EQ(redone->steps_done_before, 2);
  EXPECT_EQ(redone->steps_run, 1);
  std::vector<int> steps;
  for (const auto& l : read_log(c.run_dir / "train_log.jsonl")) steps.push_back(l["step"].get<int>());
  EXPECT_EQ(steps, (std::vector<int>{1, 2, 3}));

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

// An evaluator whose settings the test chooses; every candidate fails to compile.
class SettingsStub final : public rollout::Evaluator {
 public:
  explicit SettingsStub(nlohmann::json settings) : settings_(std::move(settings)) {}
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob&) override {
    eval::EvalResult r;
    r.status = common::Status::COMPILE_ERROR;
    return r;
  }
  std::string device() const override { return "cpu"; }
  nlohmann::json settings() const override { return settings_; }

 private:
  nlohmann::json settings_;
};

// What the reward depends on beyond the config: the evaluator's options, rules and GPU, and the
// content of the prompt templates, the example and the model (by digest, not by path). A resume
// that changes any is refused, naming it.
TEST(Trainer, ResumeRefusesOtherEvaluatorSettingsOrFileContents) {
  const fs::path root = scratch() / "evaluator-settings";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  c.reward = "kernel";
  fs::copy(kSource / "prompts", root / "prompts", fs::copy_options::recursive);
  c.rollout.templates_dir = root / "prompts";
  const nlohmann::json engine = {{"evaluator", "engine"}, {"device", "cuda"}, {"gpu", "NVIDIA H200"},
                                 {"rules", "strict"}, {"options", {{"atol", 0.01}, {"n_trials", 5}}}};
  SettingsStub first_evaluator(engine);
  auto first = run_training(c, &first_evaluator);
  ASSERT_TRUE(first) << first.error().message;
  c.n_steps = 2;
  for (const auto& [field, key, value] : {std::tuple{"evaluator.options.atol", "atol", nlohmann::json(1e-4)},
                                          std::tuple{"evaluator.options.n_trials", "n_trials", nlohmann::json(3)}}) {
    nlohmann::json changed = engine;
    changed["options"][key] = value;
    SettingsStub other(changed);
    auto r = run_training(c, &other);
    ASSERT_FALSE(r) << field << " was accepted";
    EXPECT_NE(r.error().message.find(std::string("`") + field + "`"), std::string::npos) << r.error().message;
  }
  nlohmann::json other_gpu = engine;
  other_gpu["gpu"] = "NVIDIA H100 80GB HBM3";
  SettingsStub h100(other_gpu);
  auto on_h100 = run_training(c, &h100);
  ASSERT_FALSE(on_h100);
  EXPECT_NE(on_h100.error().message.find("`evaluator.gpu`"), std::string::npos) << on_h100.error().message;
  // A template edited in place: same path, other content.
  fs::path edited;
  for (const auto& e : fs::directory_iterator(root / "prompts")) {
    if (e.is_regular_file()) edited = e.path();
  }
  ASSERT_FALSE(edited.empty());
  std::ofstream(edited, std::ios::app) << "\nOne more rule.\n";
  SettingsStub same(engine);
  auto after_edit = run_training(c, &same);
  ASSERT_FALSE(after_edit);
  EXPECT_NE(after_edit.error().message.find("`files.templates"), std::string::npos) << after_edit.error().message;
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

// A step killed mid-rollout (before its update) resumes: the rollout keeps the turns the file holds
// and runs the rest, and the update and the step log take all of them, the earlier run's included
// (the trainer takes the step's records from the rollout, not from reading the file back).
TEST(Trainer, AStepKilledMidRolloutTrainsOnAllItsTurnsWhenResumed) {
  const fs::path root = scratch() / "killed-step";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  ASSERT_TRUE(run_training(c, nullptr));
  const fs::path step = c.run_dir / "steps/step-00001";
  ASSERT_EQ(count_lines(step / "trajectories.jsonl"), 16);  // 8 turns, 8 updates
  // Keep the step's run.json and its first three turns, with half of the fourth: as if killed.
  const fs::path kept = root / "kept-step";
  fs::copy(step, kept, fs::copy_options::recursive);
  fs::remove_all(c.run_dir);
  fs::create_directories(step.parent_path());
  fs::copy(kept, step, fs::copy_options::recursive);
  {
    std::ifstream in(kept / "trajectories.jsonl");
    std::ofstream out(step / "trajectories.jsonl", std::ios::trunc);
    std::string line;
    for (int i = 0; i < 3 && std::getline(in, line); ++i) out << line << "\n";
    std::getline(in, line);
    out << line.substr(0, line.size() / 2);
  }

  auto resumed = run_training(c, nullptr);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(resumed->steps_done_before, 0);
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["n_episodes"], 8);  // 3 from the killed run, 5 from this one
  EXPECT_EQ(count_lines(step / "trajectories.jsonl"), 16);
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

// Each turn's answer by (task, trajectory, turn): the rollout writes turns in the order they finish.
std::map<std::tuple<std::string, int, int>, std::string> heldout_answers(const fs::path& trajectories) {
  std::map<std::tuple<std::string, int, int>, std::string> answers;
  std::ifstream in(trajectories);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (!j.contains("response")) continue;
    answers[{j["task"].get<std::string>(), j["trajectory"].get<int>(), j["turn"].get<int>()}] =
        j["response"]["content"].get<std::string>();
  }
  return answers;
}

// Held-out evaluation (train/heldout.hpp): before the first step (a step-0 line), every K steps and
// after the last, into the same log and RUN/heldout/step-NNNNN/; a finished run rerun evaluates
// nothing again; `--steps 0` only evaluates.
TEST(Trainer, HeldOutEvaluationBeforeTheFirstStepEveryKStepsAndAfterTheLast) {
  const fs::path root = scratch() / "heldout";
  TrainConfig c = tiny_run(root);
  c.n_steps = 3;
  c.heldout.split = "all";
  c.heldout.every = 2;
  c.heldout.n_trajectories = 3;
  c.heldout.n_turns = 2;
  auto r = run_training(c, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0]["step"], 0);
  EXPECT_FALSE(log[0].contains("reward/mean"));
  EXPECT_EQ(log[0]["heldout/n_answered"], 6);  // 1 task x 3 trajectories x 2 turns
  for (const char* key : {"heldout/correct_rate", "heldout/turn1_correct_rate", "heldout/trajectory_correct_rate",
                          "heldout/tasks_solved_frac", "heldout/mean_speedup_correct", "heldout/mean_best_speedup",
                          "heldout/reward_mean", "heldout/degenerate_frac", "time/heldout_s"}) {
    EXPECT_TRUE(log[0].contains(key)) << key;
  }
  EXPECT_FALSE(log[1].contains("heldout/correct_rate"));  // step 1: not due
  EXPECT_TRUE(log[2].contains("heldout/correct_rate"));   // step 2: every 2
  EXPECT_TRUE(log[3].contains("heldout/correct_rate"));   // step 3: the last
  EXPECT_TRUE(log[3].contains("reward/mean"));
  for (const char* step : {"step-00000", "step-00002", "step-00003"}) {
    EXPECT_EQ(count_lines(c.run_dir / "heldout" / step / "trajectories.jsonl"), 12) << step;  // 6 turns, 6 updates
  }
  EXPECT_FALSE(fs::exists(c.run_dir / "heldout/step-00001"));
  auto settings = nlohmann::json::parse(std::ifstream(c.run_dir / "train.json"));
  EXPECT_EQ(settings["heldout"]["split"], "all");
  EXPECT_EQ(settings["heldout"]["turns"], 2);

  auto again = run_training(c, nullptr);  // finished: nothing is evaluated again
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(read_log(c.run_dir / "train_log.jsonl").size(), 4u);

  auto evaluate_only = [&](const fs::path& run_dir) {
    TrainConfig e = c;
    e.run_dir = run_dir;
    e.n_steps = 0;
    auto done = run_training(e, nullptr);
    EXPECT_TRUE(done) << done.error().message;
    auto lines = read_log(run_dir / "train_log.jsonl");
    EXPECT_EQ(lines.size(), 1u);
    EXPECT_FALSE(fs::exists(run_dir / "checkpoints"));
    return heldout_answers(run_dir / "heldout/step-00000/trajectories.jsonl");
  };
  // Evaluation only: the model's held-out line and nothing trained.
  EXPECT_EQ(evaluate_only(root / "eval-a").size(), 6u);
  auto eval_settings = nlohmann::json::parse(std::ifstream(root / "eval-a/train.json"));
  EXPECT_EQ(eval_settings["heldout"]["seed"], settings["heldout"]["seed"]);  // whatever the run: the same draws

  TrainConfig bad = c;
  bad.run_dir = root / "bad";
  bad.heldout.n_turns = 0;
  auto refused = run_training(bad, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--heldout-turns"), std::string::npos) << refused.error().message;
  bad.heldout = {};
  bad.n_steps = 0;
  refused = run_training(bad, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--heldout-split"), std::string::npos) << refused.error().message;
  fs::remove_all(root);
}

// Far held-out tasks (--heldout-far): evaluated with the near ones, the same way, into
// RUN/heldout-far/ and logged apart as heldout_far/...; refused without --heldout-split and when a
// far task is also trained on.
TEST(Trainer, FarHeldOutTasksAreEvaluatedAndReportedApart) {
  const fs::path root = scratch() / "heldout-far";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  c.heldout.split = "all";
  c.heldout.n_trajectories = 2;
  c.heldout.n_turns = 1;
  c.heldout.far_tasks = {kSource / "tests/ladder/task_softmax.py"};
  auto r = run_training(c, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 2u);
  for (const auto& line : log) {
    EXPECT_EQ(line["heldout/n_answered"], 2) << line.dump();
    EXPECT_EQ(line["heldout_far/n_answered"], 2) << line.dump();  // 1 far task x 2 trajectories x 1 turn
    for (const char* key : {"heldout_far/turn1_correct_rate", "heldout_far/tasks_solved_frac", "time/heldout_far_s"}) {
      EXPECT_TRUE(line.contains(key)) << key;
    }
  }
  for (const char* step : {"step-00000", "step-00001"}) {
    const fs::path far = c.run_dir / "heldout-far" / step / "trajectories.jsonl";
    ASSERT_TRUE(fs::exists(far)) << far;
    std::ifstream in(far);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_NE(nlohmann::json::parse(line)["task"].get<std::string>().find("task_softmax.py"), std::string::npos) << line;
  }
  auto settings = nlohmann::json::parse(std::ifstream(c.run_dir / "train.json"));
  EXPECT_EQ(settings["heldout"]["far_tasks"], nlohmann::json::array({(kSource / "tests/ladder/task_softmax.py").string()}));

  TrainConfig other = c;  // the same run with other far tasks: another experiment
  other.heldout.far_tasks.clear();
  auto refused = run_training(other, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("heldout"), std::string::npos) << refused.error().message;

  TrainConfig trained = c;
  trained.run_dir = root / "trained";
  trained.heldout.far_tasks = {kSource / "tests/ladder/task_softmax_small.py"};
  refused = run_training(trained, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is also a training task"), std::string::npos) << refused.error().message;

  TrainConfig unscheduled = c;
  unscheduled.run_dir = root / "unscheduled";
  unscheduled.heldout.split.clear();
  refused = run_training(unscheduled, nullptr);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--heldout-far needs --heldout-split"), std::string::npos)
      << refused.error().message;
  fs::remove_all(root);
}

// `--size small` (the CPU size of tasks/starter): every step's rollout and the held-out one size the
// task files themselves (before, the trainer handed them the sized copies, which have no size
// "small" of their own, and the first rollout failed).
TEST(Trainer, RunsAtASmallerTaskSize) {
  const fs::path root = scratch() / "small";
  TrainConfig c = tiny_run(root);
  c.n_steps = 1;
  c.rollout.tasks = {kSource / "tasks/starter"};
  c.rollout.split = "train";
  c.rollout.task_size = "small";
  c.rollout.n_turns = 1;
  c.heldout.split = "test";
  c.heldout.n_trajectories = 1;
  auto r = run_training(c, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  auto log = read_log(c.run_dir / "train_log.jsonl");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["heldout/n_answered"], 13);  // the 13 held-out ops, one trajectory each
  std::ifstream in(c.run_dir / "steps/step-00001/trajectories.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(nlohmann::json::parse(line)["task"].get<std::string>().find("/small/"), std::string::npos) << line;
  fs::remove_all(root);
}

// The held-out numbers of a hand-made set of records: 2 tasks x 2 trajectories x 2 turns.
TEST(HeldOut, MetricsCountTurnsTrajectoriesAndTasks) {
  auto turn = [](const std::string& task, int trajectory, int turn, bool correct, double speedup) {
    trajectory::TurnRecord r;
    r.task = task;
    r.trajectory = trajectory;
    r.turn = turn;
    r.outcome = trajectory::TurnOutcome::EVALUATED;
    r.response.token_ids = std::vector<std::int64_t>{1, 2, 3};
    r.response.finish_reason = "stop";
    r.correct = correct;
    if (correct) r.speedup = speedup;
    r.score = correct ? 0.3 + speedup : 0;
    return r;
  };
  std::vector<trajectory::TurnRecord> records = {
      turn("a", 0, 1, true, 1.0), turn("a", 0, 2, true, 2.0),   // trajectory best 2.0
      turn("a", 1, 1, false, 0), turn("a", 1, 2, true, 1.0),    // correct only at turn 2
      turn("b", 0, 1, false, 0), turn("b", 0, 2, false, 0),     // task b never solved
      turn("b", 1, 1, false, 0), turn("b", 1, 2, false, 0)};
  records[7].outcome = trajectory::TurnOutcome::PARSE_ERROR;  // degenerate
  records[6].outcome = trajectory::TurnOutcome::PROMPT_TOO_LONG;  // unanswered: left out
  auto m = heldout_metrics(records);
  EXPECT_EQ(m["heldout/n_answered"], 7);
  EXPECT_DOUBLE_EQ(m["heldout/correct_rate"].get<double>(), 3.0 / 7);
  EXPECT_DOUBLE_EQ(m["heldout/turn1_correct_rate"].get<double>(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(m["heldout/trajectory_correct_rate"].get<double>(), 2.0 / 4);
  EXPECT_DOUBLE_EQ(m["heldout/tasks_solved_frac"].get<double>(), 1.0 / 2);
  EXPECT_DOUBLE_EQ(m["heldout/mean_speedup_correct"].get<double>(), 4.0 / 3);
  EXPECT_DOUBLE_EQ(m["heldout/mean_best_speedup"].get<double>(), 3.0 / 4);
  EXPECT_DOUBLE_EQ(m["heldout/degenerate_frac"].get<double>(), 1.0 / 7);
  EXPECT_DOUBLE_EQ(m["heldout/reward_mean"].get<double>(), (1.3 + 2.3 + 1.3) / 7);
  HeldOutConfig off;
  EXPECT_FALSE(heldout_due(off, 0, 3));
  HeldOutConfig every2{"test", 2};
  EXPECT_TRUE(heldout_due(every2, 0, 5));
  EXPECT_FALSE(heldout_due(every2, 1, 5));
  EXPECT_TRUE(heldout_due(every2, 4, 5));
  EXPECT_TRUE(heldout_due(every2, 5, 5));
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
