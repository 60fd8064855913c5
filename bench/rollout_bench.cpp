// Orchestration throughput of the rollout runner, all measured in one run on this machine: a
// zero-latency ScriptedPolicy (a correct host answer with a <think> block) and a stub evaluator
// that returns a fixed correct EvalResult at once, so what is timed is the runner itself: prompt
// building, parsing, candidate files, the JSON lines, credit and the scheduling of units. The
// baseline is the same rollout with concurrency 1, measured in the same run; the ratio is
// concurrent / baseline turns per second. (The target: 1000 turns/s on a 2-core machine.)
// usage: kernelrl_rollout_bench [--tasks 16] [--trajectories 16] [--turns 4] [--concurrency 256]
//                               [--repeats 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/fs.hpp"
#include "kernelrl/build_config.hpp"
#include "rollout/runner.hpp"
#include "policy/scripted_policy.hpp"

using namespace kernelrl;
namespace fs = std::filesystem;

namespace {

class StubEvaluator final : public rollout::Evaluator {
 public:
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override {
    eval::EvalResult r;
    r.status = common::Status::OK;
    r.correct = true;
    r.runtime_us = 10;
    r.ref_runtime_us = 15;
    r.speedup = 1.5;
    r.task = job.task.string();
    r.candidate = job.candidate.string();
    r.format = "host";
    r.device = "cpu";
    return r;
  }
  std::string device() const override { return "cpu"; }
};

struct Measured {
  int turns = 0;
  double seconds = 0;
  double per_s() const { return seconds > 0 ? turns / seconds : 0; }
};

// One whole rollout into a fresh run directory; the best of `repeats`.
Measured measure(const fs::path& root, const fs::path& tasks_dir, int m, int n, int concurrency, int repeats,
                 const std::string& answer) {
  Measured best;
  for (int i = 0; i < repeats; ++i) {
    const fs::path out = root / ("run_c" + std::to_string(concurrency) + "_" + std::to_string(i));
    fs::remove_all(out);
    rollout::RolloutConfig c;
    c.tasks = {tasks_dir};
    c.format = common::Format::HOST;
    c.n_trajectories = m;
    c.n_turns = n;
    c.concurrency = concurrency;
    c.out_dir = out;
    auto policy = policy::ScriptedPolicy::from_list({answer}, "bench");
    StubEvaluator evaluator;
    const auto t0 = std::chrono::steady_clock::now();
    auto summary = rollout::RolloutRunner(c, policy, evaluator).run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!summary) {
      std::fprintf(stderr, "kernelrl_rollout_bench: %s\n", summary.error().message.c_str());
      std::exit(1);
    }
    if (summary->n_turns_run != summary->n_turns_total || summary->n_correct_run != summary->n_turns_total) {
      std::fprintf(stderr, "kernelrl_rollout_bench: %d of %d turns run, %d correct\n", summary->n_turns_run,
                   summary->n_turns_total, summary->n_correct_run);
      std::exit(1);
    }
    fs::remove_all(out);
    if (best.turns == 0 || s < best.seconds) best = {summary->n_turns_run, s};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int n_tasks = 16, m = 16, n = 4, concurrency = 256, repeats = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--tasks") n_tasks = value;
    else if (flag == "--trajectories") m = value;
    else if (flag == "--turns") n = value;
    else if (flag == "--concurrency") concurrency = value;
    else if (flag == "--repeats") repeats = value;
    else {
      std::fprintf(stderr, "usage: kernelrl_rollout_bench [--tasks N] [--trajectories M] [--turns N] [--concurrency C] [--repeats R]\n");
      return 64;
    }
  }
  if (n_tasks < 1 || m < 1 || n < 1 || concurrency < 1 || repeats < 1) {
    std::fprintf(stderr, "kernelrl_rollout_bench: every count must be at least 1\n");
    return 64;
  }
  const fs::path root = fs::temp_directory_path() / ("kernelrl-rollout-bench-" + std::to_string(::getpid()));
  const fs::path tasks_dir = root / "tasks";
  fs::create_directories(tasks_dir);
  const fs::path source = fs::path(build::source_dir);
  for (int t = 0; t < n_tasks; ++t) {
    char name[32];
    std::snprintf(name, sizeof name, "task_%03d.py", t);
    fs::copy_file(source / "tests/ladder/task_softmax_small.py", tasks_dir / name);
  }
  auto kernel = common::read_file(source / "tests/ladder/host/correct.cpp", 1u << 20);
  if (!kernel) {
    std::fprintf(stderr, "kernelrl_rollout_bench: %s\n", kernel.error().message.c_str());
    return 1;
  }
  const std::string answer = "<think>rows are independent</think>\n```cpp\n" + *kernel + "```\none pass per row\n";

  std::printf("rollout orchestration: %d tasks x %d trajectories x %d turns = %d turns; zero-latency policy, stub "
              "evaluator; best of %d\n", n_tasks, m, n, n_tasks * m * n, repeats);
  std::fflush(stdout);
  const Measured baseline = measure(root, tasks_dir, m, n, 1, repeats, answer);
  std::printf("  concurrency %4d: %6d turns in %7.3f s = %8.1f turns/s  (baseline)\n", 1, baseline.turns,
              baseline.seconds, baseline.per_s());
  std::fflush(stdout);
  const Measured wide = measure(root, tasks_dir, m, n, concurrency, repeats, answer);
  std::printf("  concurrency %4d: %6d turns in %7.3f s = %8.1f turns/s  (%.2fx the baseline)\n", concurrency,
              wide.turns, wide.seconds, wide.per_s(), baseline.per_s() > 0 ? wide.per_s() / baseline.per_s() : 0.0);
  std::printf("  target 1000 turns/s: %s\n", wide.per_s() >= 1000 ? "met" : "NOT met");
  fs::remove_all(root);
  return 0;
}
