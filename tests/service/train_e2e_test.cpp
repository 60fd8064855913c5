// `kernelrl train --eval-service` against the in-process engine: train::run_training, two steps of
// a tiny random policy on the CPU, its rollouts answered by a scripted sampler (a tiny random
// model never writes a code block) with a correct host kernel, an off-by-one one and an answer
// without a code block, scored with the "kernel" reward, once by the in-process engine and once by
// the evaluation service (redis-server, `kernelrl serve` and a `kernelrl worker --redis` of this
// test's own, the client `--eval-service` builds). Both runs must agree on every turn's status,
// score, return and advantage, on the step log and on the trained weights; a run whose evaluator
// answers one status otherwise must not (the comparison can fail).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../train/tiny_policy.hpp"
#include "e2e_fixture.hpp"
#include "policy/scripted_policy.hpp"
#include "rollout/evaluator.hpp"
#include "rollout_test_util.hpp"
#include "service/client.hpp"
#include "train/trainer.hpp"
#include "trajectory/reader.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::service::testing {
namespace {

std::unique_ptr<ServiceEnv> env;  // started once for the binary

// The answer of every trajectory at turn k (1 + the earlier attempts its prompt shows): no code
// block at turn 1, the correct kernel at turn 2, the off-by-one one at turn 3. All trajectories
// answer alike, so the answers do not depend on the order the rollout's threads ask in; the
// returns still differ by turn, so every advantage of the task's group is non-zero.
policy::ScriptedPolicy answers_by_turn() {
  using Reply = common::Expected<policy::PolicyResponse>;
  return policy::ScriptedPolicy([](const std::vector<common::Message>& messages, int) -> Reply {
    const std::string& prompt = messages.back().content;
    auto shows = [&](const char* attempt) { return prompt.find(attempt) != std::string::npos ? 1 : 0; };
    const int turn = 1 + shows("Attempt 1:") + shows("Attempt 2:");
    policy::PolicyResponse r;
    r.finish_reason = "stop";
    if (turn == 1) {
      r.content = "<think>softmax over each row</think>\nI would subtract the row maximum, exponentiate and divide.";
    } else {
      r.content = rollout::testing::host_answer(turn == 2 ? rollout::testing::kCorrect : rollout::testing::kOffByOne,
                                                "one pass per row");
    }
    return r;
  }, "answers-by-turn");
}

// Correctness only: with timing off the speedup is 0 and a turn's score depends on its status
// alone (0.3 when correct), so both evaluators must give the same scores.
eval::EvalOptions correctness_only() {
  eval::EvalOptions o;
  o.device = "cpu";
  o.n_trials = 1;
  o.time_kernels = false;
  o.timeout_correctness_s = 10;
  return o;
}

// Two steps of one task, 2 trajectories x 3 turns each, the kernel reward.
train::TrainConfig two_steps(const fs::path& model, const fs::path& run_dir) {
  train::TrainConfig c;
  c.model = model;
  c.tokenizer = train::testing::tiny_tokenizer();
  c.device = "cpu";
  c.run_dir = run_dir;
  c.n_steps = 2;
  c.tasks_per_step = 1;
  c.reward = "kernel";
  c.lr = 1e-3;  // large enough that the weights move visibly in two steps
  c.activation_checkpointing = false;
  c.rollout.tasks = {source_path(rollout::testing::kTask)};
  c.rollout.split = "all";
  c.rollout.format = common::Format::HOST;
  c.rollout.n_trajectories = 2;
  c.rollout.n_turns = 3;
  c.rollout.out_dir = run_dir / "steps";
  // Two minibatches: the trainer orders a step's turns by task, trajectory and turn before the
  // seeded split, so the update does not depend on the order the evaluator finished them in.
  c.update.n_minibatches = 2;
  c.update.micro_batch_tokens = 8192;
  auto resolved = rollout::resolve(c.rollout);
  EXPECT_TRUE(resolved) << resolved.error().message;
  if (resolved) c.rollout = *resolved;
  return c;
}

// What a run leaves: each step's turns (updates applied) by (step, trajectory, turn), the step
// log and the last checkpoint's tensors.
struct TrainRun {
  std::vector<std::vector<trajectory::TurnRecord>> steps;
  std::vector<nlohmann::json> log;
  std::map<std::string, at::Tensor> weights;
};

TrainRun train_with(rollout::Evaluator& evaluator, const fs::path& model, const fs::path& run_dir) {
  TrainRun run;
  auto sampler = answers_by_turn();
  auto summary = train::run_training(two_steps(model, run_dir), &evaluator, &sampler);
  EXPECT_TRUE(summary) << summary.error().message;
  if (!summary) return run;
  EXPECT_EQ(summary->steps_run, 2);
  for (const char* step : {"step-00001", "step-00002"}) {
    auto file = trajectory::read_trajectory_file(trajectory::trajectory_file_path(run_dir / "steps" / step));
    EXPECT_TRUE(file) << file.error().message;
    if (!file) continue;
    auto turns = std::move(file->records);
    std::sort(turns.begin(), turns.end(), [](const auto& a, const auto& b) {
      return std::pair(a.trajectory, a.turn) < std::pair(b.trajectory, b.turn);
    });
    run.steps.push_back(std::move(turns));
  }
  run.log = rollout::testing::read_json_lines(run_dir / "train_log.jsonl");
  auto checkpoint = weights::load_checkpoint(run_dir / "checkpoints" / "step-00002");
  EXPECT_TRUE(checkpoint) << checkpoint.error().message;
  if (checkpoint) run.weights = std::move(checkpoint->tensors);
  return run;
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(a)); }

// "WHAT X vs Y", naming a difference.
template <class T>
std::string versus(const std::string& what, const T& x, const T& y) {
  return what + " " + nlohmann::json(x).dump() + " vs " + nlohmann::json(y).dump();
}
std::string versus(const std::string& what, const std::optional<double>& x, const std::optional<double>& y) {
  auto value = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return versus(what, value(x), value(y));
}

bool same(const std::optional<double>& x, const std::optional<double>& y) {
  return x.has_value() == y.has_value() && (!x || near(*x, *y));
}

// Where two runs differ: per turn (status, correctness, score, return, advantage), per step log
// line (rewards, the update's loss, gradient norm and token counts) and per trained tensor.
std::vector<std::string> differences(const TrainRun& a, const TrainRun& b) {
  std::vector<std::string> out;
  if (a.steps.size() != b.steps.size()) out.push_back(versus("steps", a.steps.size(), b.steps.size()));
  for (std::size_t s = 0; s < std::min(a.steps.size(), b.steps.size()); ++s) {
    const auto& ta = a.steps[s];
    const auto& tb = b.steps[s];
    if (ta.size() != tb.size()) out.push_back(versus("step " + std::to_string(s + 1) + ": turns", ta.size(), tb.size()));
    for (std::size_t i = 0; i < std::min(ta.size(), tb.size()); ++i) {
      const auto& x = ta[i];
      const auto& y = tb[i];
      const std::string at = "step " + std::to_string(s + 1) + ", trajectory " + std::to_string(x.trajectory) +
                             ", turn " + std::to_string(x.turn) + ": ";
      if (std::pair(x.trajectory, x.turn) != std::pair(y.trajectory, y.turn)) out.push_back(at + "other turns");
      if (x.status() != y.status()) out.push_back(versus(at + "status", x.status(), y.status()));
      if (x.correct != y.correct) out.push_back(versus(at + "correct", x.correct, y.correct));
      if (!near(x.score, y.score)) out.push_back(versus(at + "score", x.score, y.score));
      if (!same(x.return_, y.return_)) out.push_back(versus(at + "return", x.return_, y.return_));
      if (!same(x.advantage, y.advantage)) out.push_back(versus(at + "advantage", x.advantage, y.advantage));
    }
  }
  if (a.log.size() != b.log.size()) out.push_back(versus("log lines", a.log.size(), b.log.size()));
  for (std::size_t i = 0; i < std::min(a.log.size(), b.log.size()); ++i) {
    for (const char* key : {"n_episodes", "reward/mean", "reward/max", "eval/correct_rate", "response/mean_tokens",
                            "response/degenerate_frac", "train/loss", "train/grad_norm", "train/clip_frac",
                            "train/approx_kl", "train/entropy", "train/n_samples", "train/n_tokens",
                            "train/optimizer_steps"}) {
      const double x = a.log[i].value(key, -99.0), y = b.log[i].value(key, -99.0);
      if (!near(x, y)) out.push_back(versus("log line " + std::to_string(i + 1) + ": " + key, x, y));
    }
  }
  if (a.weights.size() != b.weights.size()) out.push_back(versus("tensors", a.weights.size(), b.weights.size()));
  for (const auto& [name, x] : a.weights) {
    auto y = b.weights.find(name);
    if (y == b.weights.end()) {
      out.push_back("tensor " + name + " missing");
    } else if (const double d = (x - y->second).abs().max().item<double>(); d > 1e-6) {
      out.push_back("tensor " + name + " differs by up to " + std::to_string(d));
    }
  }
  return out;
}

// The in-process engine, except that a WRONG_OUTPUT result is reported correct: a deliberately
// different evaluator, which the comparison must tell apart.
class WrongCountsAsCorrect final : public rollout::Evaluator {
 public:
  explicit WrongCountsAsCorrect(rollout::Evaluator& inner) : inner_(inner) {}
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override {
    auto r = inner_.evaluate(job);
    if (r && r->status == common::Status::WRONG_OUTPUT) {
      r->status = common::Status::OK;
      r->correct = true;
      r->error = {};
    }
    return r;
  }
  std::string device() const override { return inner_.device(); }

 private:
  rollout::Evaluator& inner_;
};

TEST(TrainThroughTheService, MatchesTheInProcessEngine) {
  const auto t0 = clock_type::now();
  const fs::path dir = env->dir() / "train";
  const fs::path model = train::testing::tiny_checkpoint(dir / "tiny");

  eval::EngineConfig engine_config;
  engine_config.worker_binary = KERNELRL_BINARY;
  engine_config.cache_dir = dir / "compile-cache";
  engine_config.options = correctness_only();
  auto engine = eval::Engine::create(engine_config);
  ASSERT_TRUE(engine) << engine.error().message;
  rollout::EngineEvaluator in_process(**engine);

  // As `kernelrl train --eval-service URL --eval-service-token-file F` builds it (cli::make_evaluator).
  ServiceClientConfig client;
  client.base_url = "http://127.0.0.1:" + std::to_string(env->port());
  auto token = read_client_token(env->token_file().string());
  ASSERT_TRUE(token) << token.error().message;
  client.token = *token;
  auto served = ServiceEvaluator::create(client, engine_config.options, engine_config.rules);
  ASSERT_TRUE(served) << served.error().message;
  EXPECT_EQ((*served)->device(), "cpu");

  const TrainRun local = train_with(in_process, model, dir / "in-process");
  const double finished_before = env->finished_total();
  const TrainRun service = train_with(**served, model, dir / "service");
  EXPECT_EQ(env->finished_total() - finished_before, 8);  // 2 steps x 2 trajectories x 2 turns with code
  ASSERT_EQ(local.steps.size(), 2u);
  ASSERT_EQ(local.log.size(), 2u);
  ASSERT_FALSE(local.weights.empty());

  // Not vacuous: every outcome the sampler aims at happened, every turn carries signal, and the
  // update trained on the scripted answers and moved the weights.
  std::map<std::string, int> statuses;
  for (const auto& step : local.steps) {
    ASSERT_EQ(step.size(), 6u);
    for (const auto& t : step) {
      ++statuses[t.status()];
      ASSERT_TRUE(t.advantage.has_value());
      EXPECT_NE(*t.advantage, 0.0) << "turn " << t.turn;
    }
  }
  EXPECT_EQ(statuses, (std::map<std::string, int>{{"PARSE_ERROR", 4}, {"OK", 4}, {"WRONG_OUTPUT", 4}}));
  for (const auto& line : local.log) {
    EXPECT_EQ(line["train/n_samples"], 6) << line.dump();
    EXPECT_GT(line["train/n_tokens"].get<double>(), 0) << line.dump();
    EXPECT_NEAR(line["reward/mean"].get<double>(), 0.1, 1e-9) << line.dump();  // one correct turn of three: 0.3 / 3
  }
  auto start = weights::load_checkpoint(model);
  ASSERT_TRUE(start) << start.error().message;
  double moved = 0;
  for (const auto& [name, w] : local.weights) moved = std::max(moved, (w - start->tensors.at(name)).abs().max().item<double>());
  EXPECT_GT(moved, 1e-4);

  const auto mismatch = differences(local, service);
  EXPECT_TRUE(mismatch.empty()) << nlohmann::json(mismatch).dump(1);

  WrongCountsAsCorrect lenient(in_process);
  const TrainRun other = train_with(lenient, model, dir / "wrong-counts-as-correct");
  const auto changed = differences(local, other);
  EXPECT_FALSE(changed.empty());
  bool weights_changed = false, loss_changed = false;
  for (const auto& d : changed) {
    weights_changed |= d.rfind("tensor ", 0) == 0;
    loss_changed |= d.find("train/loss") != std::string::npos;
  }
  EXPECT_TRUE(weights_changed && loss_changed) << nlohmann::json(changed).dump(1);
  std::cout << "[ train    ] three 2-step runs (in-process, service, altered) in " << seconds_since(t0) << " s" << std::endl;
}

class ServiceForTraining : public ::testing::Environment {
 public:
  void SetUp() override {
    env = std::make_unique<ServiceEnv>();
    env->ensure_workers(1);
    // The in-process engine's cache folder, as the worker's.
    ::setenv("KERNELRL_CACHE_DIR", (env->dir() / "cache").string().c_str(), 1);
  }
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->failed_test_count() > 0) {
      std::cerr << "--- serve.log\n" << env->serve_log() << env->worker_logs();
    }
    env.reset();
  }
};
const auto* const kService = ::testing::AddGlobalTestEnvironment(new ServiceForTraining);

}  // namespace
}  // namespace kernelrl::service::testing
