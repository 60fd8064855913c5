// Data-parallel training end to end on the CPU. Two ranks of run_training (this binary started
// twice by the launcher, train/launcher.hpp, with KERNELRL_RANK set, meeting through gloo) train a
// tiny random model for two steps on three tasks, 2 trajectories x 2 turns each and two
// minibatches, their answers scripted (by turn and task, so they do not depend on which rank asks)
// and scored by the format reward. Their step log and final checkpoint must equal one process's
// within 1e-5; ranks that skip the gradient sum must not (the comparison can fail). A rank that
// exits early stops the launch, naming it, and leaves no process behind. `kernelrl train --ranks 3`
// runs (one rank without tasks); `--gpus 2` without GPUs fails naming why.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "../common/process_state.hpp"
#include "common/subprocess.hpp"
#include "policy/scripted_policy.hpp"
#include "tiny_policy.hpp"
#include "train/data_parallel.hpp"
#include "train/launcher.hpp"
#include "train/trainer.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = KERNELRL_SOURCE_DIR;

// What a rank started by the tests does (KERNELRL_TEST_MODE).
constexpr const char* kMode = "KERNELRL_TEST_MODE";
constexpr const char* kRoot = "KERNELRL_TEST_ROOT";  // the scratch folder: tiny/ (the model), the run directories
constexpr const char* kSteps = "KERNELRL_TEST_STEPS";  // the run's --steps (an existing run resumes)

const char* env(const char* name) { return std::getenv(name); }

fs::path scratch(const std::string& name) {
  auto p = fs::temp_directory_path() / ("kernelrl-train-ranks-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// Two steps over three tasks (all in every step: the ranks take 2 and 1), 2 trajectories x 2 turns,
// two minibatches, the format reward.
TrainConfig two_steps(const fs::path& model, const fs::path& run_dir) {
  TrainConfig c;
  c.model = model;
  c.tokenizer = testing::tiny_tokenizer();
  c.device = "cpu";
  c.run_dir = run_dir;
  c.n_steps = 2;
  c.tasks_per_step = 3;
  c.seed = 5;
  c.lr = 1e-3;  // the weights move visibly in two steps
  c.reward = "format";
  c.activation_checkpointing = false;
  c.rollout.tasks = {kSource / "tasks/level1/002_relu.py", kSource / "tasks/level1/003_softmax.py",
                     kSource / "tests/ladder/task_softmax_small.py"};
  c.rollout.split = "all";
  c.rollout.format = common::Format::NATIVE;
  c.rollout.n_trajectories = 2;
  c.rollout.n_turns = 2;
  c.rollout.out_dir = run_dir / "steps";
  c.policy.sampling.max_new_tokens = 64;
  c.update.grpo.max_response_tokens = 64;
  c.update.n_minibatches = 2;
  auto resolved = rollout::resolve(c.rollout);
  EXPECT_TRUE(resolved) << resolved.error().message;
  if (resolved) c.rollout = *resolved;
  return c;
}

// Turn 1: prose, no code (score 0). Turn 2: a code block whose markers of the native format depend
// on the task, so the groups' returns differ by turn and by task and every advantage is non-zero.
policy::ScriptedPolicy answers_by_turn_and_task() {
  using Reply = common::Expected<policy::PolicyResponse>;
  return policy::ScriptedPolicy([](const std::vector<common::Message>& messages, int) -> Reply {
    std::string all;
    for (const auto& m : messages) all += m.content;
    policy::PolicyResponse r;
    r.finish_reason = "stop";
    if (messages.back().content.find("Attempt 1:") == std::string::npos) {
      r.content = "I would write one thread per element.";
      return r;
    }
    std::string code = "#include <kernelrl/abi.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n";
    if (all.find("softmax") != std::string::npos || all.find("Softmax") != std::string::npos) {
      code += "extern \"C\" int kernelrl_forward(float* x) { k<<<1, 32>>>(x); return 0; }\n";
    }
    r.content = "```cuda\n" + code + "```";
    return r;
  }, "answers-by-turn-and-task");
}

// A rank's group that leaves each rank's gradients its own: the negative control.
class WithoutGradientSum final : public RankGroup {
 public:
  explicit WithoutGradientSum(RankGroup& inner) : inner_(inner) {}
  const RankInfo& rank_info() const override { return inner_.rank_info(); }
  common::Fallible sum_gradients(const std::vector<torch::Tensor>&) override { return common::Ok{}; }
  common::Fallible sum_values(std::vector<double>& v) override { return inner_.sum_values(v); }
  common::Fallible max_values(std::vector<double>& v) override { return inner_.max_values(v); }
  common::Expected<std::vector<std::string>> all_gather(const std::string& t) override { return inner_.all_gather(t); }
  common::Fallible barrier() override { return inner_.barrier(); }

 private:
  RankGroup& inner_;
};

// One rank, when the launcher started it (modes: "train", "no-sum", "exit-early"); skipped otherwise.
TEST(TrainRanks, Rank) {
  auto rank = rank_from_environment();
  ASSERT_TRUE(rank) << rank.error().message;
  if (!*rank || !env(kMode)) GTEST_SKIP() << "runs only as a rank started by the TrainRanks tests";
  const std::string mode = env(kMode);
  const fs::path root = env(kRoot);
  if (mode == "exit-early") {
    const fs::path pid_file = root / "grandchild.pid";
    if ((*rank)->info.rank == 1) {  // once rank 0 has its child
      for (int i = 0; i < 300 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::_exit(3);
    }
    // Rank 0 starts a child of its own (in the ranks' process group), then waits for rank 1 in vain.
    const pid_t child = ::fork();
    if (child == 0) {
      ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::ofstream(root / "grandchild.pid.tmp") << child << "\n";
    fs::rename(root / "grandchild.pid.tmp", pid_file);
  }
  GradientAllReduce group;
  auto joined = group.connect((*rank)->info, (*rank)->host, (*rank)->port, std::chrono::seconds(60));
  ASSERT_TRUE(joined) << joined.error().message;
  WithoutGradientSum without_sum(group);
  RankGroup* ranks = mode == "no-sum" ? static_cast<RankGroup*>(&without_sum) : &group;
  auto sampler = answers_by_turn_and_task();
  TrainConfig config = two_steps(root / "tiny", root / mode);
  if (env(kSteps)) config.n_steps = std::atoi(env(kSteps));
  auto summary = run_training(config, nullptr, &sampler, ranks);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->steps_done_before + summary->steps_run, config.n_steps);
}

// Starts this binary as `n` ranks in `mode`.
common::Fallible launch(const fs::path& root, const std::string& mode, int n, std::vector<pid_t>* pids = nullptr,
                        int n_steps = 2) {
  ::setenv(kMode, mode.c_str(), 1);
  ::setenv(kSteps, std::to_string(n_steps).c_str(), 1);
  ::setenv(kRoot, root.c_str(), 1);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  LaunchConfig config;
  config.command = {fs::read_symlink("/proc/self/exe").string(), "--gtest_filter=TrainRanks.Rank"};
  config.n_ranks = n;
  return launch_ranks(config, pids);
}

// A run's step log and last checkpoint.
struct TrainRun {
  std::vector<nlohmann::json> log;
  std::map<std::string, at::Tensor> weights;
};

TrainRun read_run(const fs::path& run_dir) {
  TrainRun run;
  std::ifstream in(run_dir / "train_log.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) run.log.push_back(nlohmann::json::parse(line));
  }
  auto checkpoint = weights::load_checkpoint(run_dir / "checkpoints/step-00002");
  EXPECT_TRUE(checkpoint) << run_dir << ": " << checkpoint.error().message;
  if (checkpoint) run.weights = std::move(checkpoint->tensors);
  return run;
}

// Where two runs differ beyond 1e-5: the step log's metrics, then the trained tensors.
std::vector<std::string> differences(const TrainRun& a, const TrainRun& b) {
  std::vector<std::string> out;
  if (a.log.size() != b.log.size()) out.push_back("log lines " + std::to_string(a.log.size()) + " vs " + std::to_string(b.log.size()));
  for (std::size_t i = 0; i < std::min(a.log.size(), b.log.size()); ++i) {
    for (const char* key : {"n_episodes", "reward/mean", "reward/max", "eval/correct_rate", "response/mean_tokens",
                            "response/degenerate_frac", "train/loss", "train/grad_norm", "train/entropy",
                            "train/clip_frac", "train/approx_kl", "train/n_samples", "train/n_tokens",
                            "train/optimizer_steps"}) {
      const double x = a.log[i].value(key, -99.0), y = b.log[i].value(key, -99.0);
      if (std::abs(x - y) > 1e-5 * std::max(1.0, std::abs(x))) {
        out.push_back("log line " + std::to_string(i + 1) + ": " + key + " " + std::to_string(x) + " vs " + std::to_string(y));
      }
    }
  }
  if (a.weights.size() != b.weights.size()) out.push_back("tensor counts differ");
  for (const auto& [name, x] : a.weights) {
    auto y = b.weights.find(name);
    if (y == b.weights.end()) {
      out.push_back("tensor " + name + " missing");
    } else if (const double d = (x - y->second).abs().max().item<double>(); d > 1e-5) {
      out.push_back("tensor " + name + " differs by up to " + std::to_string(d));
    }
  }
  return out;
}

// The largest difference between two runs' tensors of the same name (for the log).
double max_weight_difference(const TrainRun& a, const TrainRun& b) {
  double d = 0;
  for (const auto& [name, x] : a.weights) {
    if (auto y = b.weights.find(name); y != b.weights.end()) d = std::max(d, (x - y->second).abs().max().item<double>());
  }
  return d;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// The run of one process (the old path, no group) against two ranks (stopped after the first step
// and resumed: the checkpoint and optimizer state rank 0 wrote), and two ranks without the gradient
// sum against both.
TEST(TrainRanks, TwoRanksTrainAsOneProcess) {
  torch::set_num_threads(1);
  const fs::path root = scratch("equal");
  testing::tiny_checkpoint(root / "tiny");
  const auto t0 = std::chrono::steady_clock::now();
  auto sampler = answers_by_turn_and_task();
  auto one = run_training(two_steps(root / "tiny", root / "one"), nullptr, &sampler);
  ASSERT_TRUE(one) << one.error().message;
  const auto t1 = std::chrono::steady_clock::now();
  auto first = launch(root, "train", 2, nullptr, 1);
  ASSERT_TRUE(first) << first.error().message;
  auto resumed = launch(root, "train", 2, nullptr, 2);
  ASSERT_TRUE(resumed) << resumed.error().message;
  const auto t2 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "one process %.1f s, two ranks %.1f s\n", std::chrono::duration<double>(t1 - t0).count(),
               std::chrono::duration<double>(t2 - t1).count());

  const TrainRun single = read_run(root / "one");
  const TrainRun ranks = read_run(root / "train");
  ASSERT_EQ(single.log.size(), 2u);
  for (const auto& line : single.log) {  // the comparison is of a run that learns something
    EXPECT_GT(line["train/grad_norm"].get<double>(), 0) << line.dump();
    EXPECT_EQ(line["n_episodes"].get<int>(), 12) << line.dump();
    EXPECT_EQ(line["train/optimizer_steps"].get<int>(), 2) << line.dump();
  }
  auto start = weights::load_checkpoint(root / "tiny");
  ASSERT_TRUE(start) << start.error().message;
  EXPECT_FALSE(differences(single, TrainRun{single.log, start->tensors}).empty()) << "the weights did not move";
  EXPECT_TRUE(differences(single, ranks).empty()) << joined(differences(single, ranks));
  // Each rank wrote its own shard of each step's trajectories; only rank 0 the checkpoints.
  for (const char* shard : {"rank-0", "rank-1"}) {
    EXPECT_TRUE(fs::exists(root / "train/steps/step-00002" / shard / "trajectories.jsonl")) << shard;
  }

  auto unsummed = launch(root, "no-sum", 2);
  ASSERT_TRUE(unsummed) << unsummed.error().message;
  const TrainRun without_sum = read_run(root / "no-sum");
  const auto found = differences(single, without_sum);
  EXPECT_FALSE(found.empty()) << "ranks that skip the gradient sum trained as one process";
  std::fprintf(stderr, "largest weight difference to one process: two ranks %.3g, two ranks without the sum %.3g (%zu differences); "
               "grad norms %.6g %.6g\n", max_weight_difference(single, ranks), max_weight_difference(single, without_sum),
               found.size(), single.log[0]["train/grad_norm"].get<double>(), single.log[1]["train/grad_norm"].get<double>());
  fs::remove_all(root);
}

// A zombie awaiting its reaper is gone too.
bool gone(pid_t pid) { return !kernelrl::testing::process_running(pid); }

TEST(TrainRanks, ARankThatExitsEarlyStopsTheOthers) {
  const fs::path root = scratch("exit-early");
  std::vector<pid_t> pids;
  const auto t0 = std::chrono::steady_clock::now();
  auto launched = launch(root, "exit-early", 2, &pids);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(launched) << "a rank exited with status 3 and the launch succeeded";
  EXPECT_NE(launched.error().message.find("rank 1 exited with status 3"), std::string::npos) << launched.error().message;
  EXPECT_LT(seconds, 30) << "rank 0 was left waiting for its 60 s rendezvous timeout";
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_TRUE(gone(pid)) << "rank process " << pid << " is still there";
  pid_t grandchild = 0;
  std::ifstream(root / "grandchild.pid") >> grandchild;
  ASSERT_GT(grandchild, 0) << "rank 0 did not start its child";
  for (int i = 0; i < 50 && !gone(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(gone(grandchild)) << "rank 0's child " << grandchild << " outlived the launch";
  fs::remove_all(root);
}

// `kernelrl train` with the given extra options on the tiny model, one step, the format reward.
common::RunResult kernelrl_train(const fs::path& root, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {KERNELRL_BINARY, "train", "--model", (root / "tiny").string(),
                                   "--tokenizer", testing::tiny_tokenizer().string(), "--policy-device", "cpu",
                                   "--tasks", (kSource / "tasks/level1/002_relu.py").string(),
                                   (kSource / "tests/ladder/task_softmax_small.py").string(), "--split", "all",
                                   "--steps", "1", "--tasks-per-step", "2", "--trajectories", "2", "--turns", "1",
                                   "--reward", "format", "--max-new-tokens", "8", "--no-activation-checkpointing",
                                   "--out", (root / "run").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(100000);
  auto r = common::run_process(argv, {}, {"OMP_NUM_THREADS=1"}, limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : common::RunResult{};
}

// Three ranks, two tasks: rank 2 has none to roll out and still takes part in the update.
TEST(KernelrlTrainRanks, ThreeCpuRanksRunAStepOneWithoutTasks) {
  const fs::path root = scratch("cli");
  testing::tiny_checkpoint(root / "tiny");
  auto r = kernelrl_train(root, {"--ranks", "3"});
  ASSERT_TRUE(r.ok()) << r.output;
  std::ifstream log(root / "run/train_log.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(log, line)) << r.output;
  EXPECT_EQ(nlohmann::json::parse(line)["n_episodes"].get<int>(), 4) << line;  // both tasks' episodes
  EXPECT_FALSE(std::getline(log, line)) << "a second log line: " << line;
  for (const char* shard : {"rank-0", "rank-1"}) {
    EXPECT_TRUE(fs::exists(root / "run/steps/step-00001" / shard / "trajectories.jsonl")) << shard << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(root / "run/steps/step-00001/rank-2")) << r.output;
  EXPECT_TRUE(fs::exists(root / "run/checkpoints/step-00001/model.safetensors")) << r.output;
  EXPECT_NE(r.output.find("train " + (root / "run").string() + ": 1 steps run"), std::string::npos) << r.output;
  fs::remove_all(root);
}

TEST(KernelrlTrainRanks, AFailingRankIsNamed) {
  const fs::path root = scratch("cli-fails");  // no tiny/: every rank fails to load the model
  auto r = kernelrl_train(root, {"--ranks", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("exited with status 2; the other ranks were stopped"), std::string::npos) << r.output;
  fs::remove_all(root);
}

TEST(KernelrlTrainRanks, GpusWithoutThemFails) {
  if (torch::cuda::device_count() >= 2) GTEST_SKIP() << "this machine has 2 GPUs: the check under test does not apply";
  const fs::path root = scratch("cli-gpus");
  testing::tiny_checkpoint(root / "tiny");
  auto r = kernelrl_train(root, {"--gpus", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string want = "--gpus 2: this machine has " + std::to_string(torch::cuda::device_count()) + " CUDA device(s)";
  EXPECT_NE(r.output.find(want), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(root / "run/train_log.jsonl"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace kernelrl::train
