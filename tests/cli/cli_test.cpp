// The kernelrl binary as a user meets it: exit codes (0 evaluated, 2 could not evaluate, 64 usage,
// 1 batch expectation missed), JSON output, batch summaries and clear errors naming the file.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/process_state.hpp"
#include "common/subprocess.hpp"

namespace kernelrl {
namespace {

struct CliRun {
  int code;
  std::string output;
};

CliRun kernelrl(std::vector<std::string> args, std::chrono::milliseconds limit = std::chrono::milliseconds(300000)) {
  args.insert(args.begin(), KERNELRL_BINARY);
  common::RunLimits limits;
  limits.wall_time = limit;
  auto r = common::run_process(args, KERNELRL_SOURCE_DIR, {"KERNELRL_CACHE_DIR=" +
      (std::filesystem::temp_directory_path() / "kernelrl-cli-test-cache").string()}, limits);
  EXPECT_TRUE(r) << r.error().message;
  return r ? CliRun{r->exit_code, r->output} : CliRun{-1, ""};
}

const std::string kTask = "tests/ladder/task_softmax_small.py";

TEST(Cli, UsageErrorsExit64) {
  EXPECT_EQ(kernelrl({}).code, 64);
  EXPECT_EQ(kernelrl({"eval", "--task", kTask}).code, 64);
  EXPECT_EQ(kernelrl({"eval", "--task", kTask, "--candidate", "x.cpp", "--format", "bogus"}).code, 64);
}

// A stopped batch resumed: jobs with a record are left out, a line cut off mid-record is kept on its
// own line, the rest are evaluated and appended.
TEST(Cli, ABatchResumesWhereItsRecordsEnd) {
  const auto dir = std::filesystem::temp_directory_path() / "kernelrl-cli-resume";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto batch = dir / "batch.json";
  std::ofstream(batch) << nlohmann::json::array(
      {{{"task", kTask}, {"candidate", "tests/ladder/host/correct.cpp"}},
       {{"task", kTask}, {"candidate", "tests/ladder/host/off_by_one.cpp"}, {"expect", "WRONG_OUTPUT"}},
       {{"task", kTask}, {"candidate", "tests/ladder/host/correct.cpp"}}}).dump();
  const auto out = dir / "out.jsonl";
  const std::vector<std::string> run{"eval", "--batch", batch.string(), "--device", "cpu", "--out", out.string(), "--resume"};
  EXPECT_EQ(kernelrl({"eval", "--batch", batch.string(), "--resume"}).code, 64);  // no --out
  CliRun first = kernelrl(run);
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("0 of 3 jobs already have a record"), std::string::npos) << first.output;
  // As if stopped while writing the third record: two records and half a line.
  std::vector<std::string> lines;
  {
    std::ifstream in(out);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 3u);
  std::ofstream(out, std::ios::trunc) << lines[0] << "\n" << lines[1] << "\n" << lines[2].substr(0, 20);
  CliRun second = kernelrl(run);
  ASSERT_EQ(second.code, 0) << second.output;
  EXPECT_NE(second.output.find("2 of 3 jobs already have a record; evaluating the 1 left (1 unreadable lines skipped"),
            std::string::npos) << second.output;
  lines.clear();
  std::ifstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[2], lines[2].substr(0, 20)) << "the cut-off line is kept as it was";
  auto last = nlohmann::json::parse(lines[3], nullptr, false);
  ASSERT_FALSE(last.is_discarded()) << lines[3];
  EXPECT_EQ(last["status"], "OK");
  CliRun third = kernelrl(run);
  EXPECT_NE(third.output.find("3 of 3 jobs already have a record; evaluating the 0 left"), std::string::npos) << third.output;
  std::filesystem::remove_all(dir);
}

// --gpus: a bad list, several GPUs for one candidate, and a GPU the machine does not have are
// usage errors naming what is wrong (this runs where the engine finds no GPU).
TEST(Cli, GpusThatCannotBeUsedAreUsageErrors) {
  CliRun bad = kernelrl({"eval", "--batch", "examples/manifest.json", "--gpus", "0,x"});
  EXPECT_EQ(bad.code, 64);
  EXPECT_NE(bad.output.find("--gpus: 'x' is not a GPU index"), std::string::npos) << bad.output;
  CliRun several = kernelrl({"eval", "--task", kTask, "--candidate", "tests/ladder/host/correct.cpp", "--gpus", "0,1"});
  EXPECT_EQ(several.code, 64);
  EXPECT_NE(several.output.find("--gpus with several is for --batch"), std::string::npos) << several.output;
  if (std::filesystem::exists("/proc/driver/nvidia/gpus")) GTEST_SKIP() << "this machine has a GPU driver";
  CliRun missing = kernelrl({"eval", "--task", kTask, "--candidate", "tests/ladder/host/correct.cpp", "--gpus", "0"});
  EXPECT_EQ(missing.code, 64);
  EXPECT_NE(missing.output.find("GPU 0 is not usable here"), std::string::npos) << missing.output;
}

TEST(Cli, EvaluatedCandidateExits0WithAJsonRecord) {
  CliRun r = kernelrl({"eval", "--task", kTask, "--candidate", "tests/ladder/host/correct.cpp", "--json", "--device", "cpu"});
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["status"], "OK");
  EXPECT_EQ(j["correct"], true);
  EXPECT_GT(j["speedup"].get<double>(), 0);
  EXPECT_EQ(j["format"], "host");
}

TEST(Cli, AFailingCandidateIsStillEvaluated) {
  CliRun r = kernelrl({"eval", "--task", kTask, "--candidate", "tests/ladder/host/abort.cpp", "--device", "cpu"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("RUNTIME_ERROR"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SIGABRT"), std::string::npos) << r.output;
}

using testing::ProcessState;

// A process below the root asked for (descendants_of), with its depth there.
struct Descendant : ProcessState {
  int depth = 0;
};

// Live (not zombie) processes whose parent chain leads to `root`, with their depth below it.
std::vector<Descendant> descendants_of(pid_t root) {
  std::map<pid_t, std::vector<ProcessState>> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto p = testing::read_process_state(std::stoi(name)); p && p->state != 'Z') children[p->ppid].push_back(*p);
  }
  std::vector<Descendant> out;
  std::vector<std::pair<pid_t, int>> todo{{root, 0}};
  while (!todo.empty()) {
    const auto [parent, depth] = todo.back();
    todo.pop_back();
    for (const ProcessState& c : children[parent]) {
      out.push_back({c, depth + 1});
      todo.emplace_back(c.pid, depth + 1);
    }
  }
  return out;
}

// An engine killed outright (SIGKILL: no handler runs) while a candidate hangs leaves nothing
// running: its worker sees that its parent is gone and stops the candidate at once, not at the end
// of the correctness phase's limit (300 s here), then ends on its closed request pipe.
TEST(Cli, AKilledEngineLeavesNoCandidateRunning) {
  const pid_t engine = ::fork();
  ASSERT_GE(engine, 0);
  if (engine == 0) {
    if (::chdir(KERNELRL_SOURCE_DIR) != 0) ::_exit(127);
    const std::string cache = (std::filesystem::temp_directory_path() / "kernelrl-cli-test-cache").string();
    ::setenv("KERNELRL_CACHE_DIR", cache.c_str(), 1);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::execl(KERNELRL_BINARY, KERNELRL_BINARY, "eval", "--task", kTask.c_str(), "--candidate",
            "tests/ladder/host/infinite_loop.cpp", "--device", "cpu", "--timeout-correctness-s", "300",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The engine, its worker, the worker's child and the candidate's own process (host candidates run
  // apart, in kernelrl-runner below the child): wait until that process has spun for a second.
  std::vector<Descendant> tree;
  auto spinning = [&] {
    return std::any_of(tree.begin(), tree.end(), [](const Descendant& p) {
      return p.depth >= 3 && p.comm == "kernelrl-runner" && p.cpu_ticks >= ::sysconf(_SC_CLK_TCK);
    });
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!spinning() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    tree = descendants_of(engine);
  }
  ::kill(engine, SIGKILL);
  ::waitpid(engine, nullptr, 0);
  ASSERT_TRUE(spinning()) << "the candidate's call never began";
  std::vector<pid_t> left;
  for (const Descendant& p : tree) left.push_back(p.pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::erase_if(left, [](pid_t p) { return !testing::process_running(p); });
  }
  std::string names;
  for (pid_t p : left) names += " " + std::to_string(p);
  EXPECT_TRUE(left.empty()) << "still running 15 s after the engine was killed:" << names;
  for (pid_t p : left) ::kill(p, SIGKILL);
}

TEST(Cli, MissingFilesAndBrokenTasksExit2NamingTheFile) {
  CliRun missing = kernelrl({"eval", "--task", "no/such/task.py", "--candidate", "tests/ladder/host/correct.cpp"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.output.find("no/such/task.py"), std::string::npos) << missing.output;
  CliRun broken = kernelrl({"tasks", "show", "tests/data/tasks/syntax_error.py", "--device", "cpu"});
  EXPECT_EQ(broken.code, 2);
  EXPECT_NE(broken.output.find("syntax_error.py"), std::string::npos) << broken.output;
  EXPECT_NE(broken.output.find("syntax error"), std::string::npos) << broken.output;
}

TEST(Cli, TasksShowPrintsTheSignature) {
  CliRun r = kernelrl({"tasks", "show", kTask, "--device", "cpu"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("[64, 256]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("float32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("eager reference"), std::string::npos) << r.output;
}

TEST(Cli, BatchEndsWithASummaryAndChecksExpectations) {
  CliRun r = kernelrl({"eval", "--batch", "tests/data/batch_host.json", "--check-expect", "--device", "cpu"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("4 evaluated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("COMPILE_ERROR 1"), std::string::npos) << r.output;
}

TEST(Cli, TasksCheckFailsDegenerateTasksWithAReasonEach) {
  CliRun bad = kernelrl({"tasks", "check", "tests/data/tasks/degenerate", "--device", "cpu"});
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_NE(bad.output.find("0 of 4 tasks pass"), std::string::npos) << bad.output;
  for (const char* reason : {"nearly constant", "does not change with the seed", "NaN/inf", "nearly zero"}) {
    EXPECT_NE(bad.output.find(reason), std::string::npos) << reason << "\n" << bad.output;
  }
  CliRun good = kernelrl({"tasks", "check", "tests/data/tasks/healthy", "--device", "cpu", "--min-ref-us", "1"});
  EXPECT_EQ(good.code, 0) << good.output;
  EXPECT_NE(good.output.find("1 of 1 tasks pass"), std::string::npos) << good.output;
  CliRun slow = kernelrl({"tasks", "check", "tests/data/tasks/healthy", "--device", "cpu", "--min-ref-us", "1e9"});
  EXPECT_EQ(slow.code, 1);
  EXPECT_NE(slow.output.find("under the minimum"), std::string::npos) << slow.output;
  EXPECT_EQ(kernelrl({"tasks", "check", "no/such/folder"}).code, 2);
}

// The shipped suite on the CPU (CI): a spread of tasks from each level loads, runs and has healthy
// outputs at full size and, with their eager times, at the small size made for CPUs; the H200 run
// checks all 200 with their eager times (scripts/gpu-check.sh).
TEST(Cli, ShippedTasksPassTheCheckOnTheCpu) {
  for (const char* level : {"tasks/level1", "tasks/level2"}) {
    CliRun r = kernelrl({"tasks", "check", level, "--device", "cpu", "--sample", "4", "--no-timing", "--workers", "2"});
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("4 of 4 tasks pass"), std::string::npos) << r.output;
    CliRun small = kernelrl({"tasks", "check", level, "--device", "cpu", "--sample", "10", "--size", "small", "--workers", "2"});
    EXPECT_EQ(small.code, 0) << small.output;
    EXPECT_NE(small.output.find("10 of 10 tasks pass"), std::string::npos) << small.output;
    EXPECT_NE(small.output.find(std::string(level) + "/"), std::string::npos) << small.output;  // rows name the shipped file
  }
}

// `--size small`: the sized copy is evaluated (the record names it); a size the manifest does not
// give is an error naming the manifest and the sizes it has.
TEST(Cli, TasksAreEvaluatedAtTheSizeAsked) {
  const std::vector<std::string> relu = {"eval", "--task", "tasks/level1/002_relu.py", "--candidate",
                                         "tasks/fixtures/level1/002_relu.host.cpp", "--device", "cpu", "--json"};
  auto args = relu;
  args.insert(args.end(), {"--size", "small"});
  CliRun r = kernelrl(args);
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["status"], "OK") << r.output;
  EXPECT_NE(j["task"].get<std::string>().find("/tasks/small/"), std::string::npos) << j["task"];
  args.back() = "tiny";
  CliRun tiny = kernelrl(args);
  EXPECT_EQ(tiny.code, 2) << tiny.output;
  EXPECT_NE(tiny.output.find("tasks/level1/manifest.json: 002_relu.py has no size 'tiny' (its sizes: full, small)"),
            std::string::npos)
      << tiny.output;
  // A task in no manifest keeps its own size, and says so.
  CliRun own = kernelrl({"eval", "--task", kTask, "--candidate", "tests/ladder/host/correct.cpp", "--device", "cpu", "--size", "small"});
  EXPECT_EQ(own.code, 0) << own.output;
  EXPECT_NE(own.output.find("is in no manifest, so it has no size 'small'"), std::string::npos) << own.output;
}

// `kernelrl doctor` says what this machine can do, as a table or as JSON.
TEST(Cli, DoctorSaysWhatThisMachineCanDo) {
  CliRun r = kernelrl({"doctor", "--json"});
  ASSERT_EQ(r.code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  for (const char* key : {"kernelrl", "cpu", "python", "torch", "blas", "c++", "nvcc", "host-cc", "confine", "gpu",
                          "engine device", "format native", "format host", "format kernelbench", "compile cache",
                          "sized tasks", "default model"}) {
    EXPECT_TRUE(j.contains(key)) << key << "\n" << r.output;
  }
  EXPECT_EQ(j["format host"], "yes") << r.output;
  EXPECT_NE(j["compile cache"].get<std::string>().find("kernelrl-cli-test-cache/compile"), std::string::npos) << r.output;
  if (j["engine device"].get<std::string>().rfind("cpu", 0) == 0) {
    EXPECT_EQ(j["format native"], "no: no GPU") << r.output;
    EXPECT_EQ(j["gpu"].get<std::string>().rfind("none", 0), 0u) << r.output;
  }
  CliRun table = kernelrl({"doctor"});
  EXPECT_EQ(table.code, 0) << table.output;
  EXPECT_NE(table.output.find("format kernelbench"), std::string::npos) << table.output;
}

// The shipped host fixtures (issue 4's CI half; the native ones run on the H200): every one is
// evaluated correct on the CPU at the small size made for CPUs (they read their sizes from the
// tensors), and the one with the largest inputs at the tasks' full size, within the default time
// limits (they scale with the task: five draws of its 640 MB of inputs alone took 17-18 s of the
// fixed 30 s there were before on a 2-core machine). All eleven at full size took 12 min on the
// 2-core VM (2026-12-07) and timed out in CI: the full size proves nothing more for the others.
TEST(Cli, HostFixturesAreCorrectOnTheCpu) {
  std::ifstream in(std::string(KERNELRL_SOURCE_DIR) + "/tasks/fixtures/manifest.json");
  nlohmann::json all = nlohmann::json::parse(in), host = nlohmann::json::array(), largest = nlohmann::json::array();
  for (const auto& e : all) {
    if (e.value("format", "") != "host") continue;
    host.push_back(e);
    if (e.value("task", "").find("/071_masked_cumsum.py") != std::string::npos) largest.push_back(e);
  }
  ASSERT_GE(host.size(), 10u);
  ASSERT_EQ(largest.size(), 1u);
  const auto dir = std::filesystem::temp_directory_path();
  const auto batch = dir / "kernelrl-host-fixtures.json", full = dir / "kernelrl-host-fixture-full.json";
  std::ofstream(batch) << host.dump(1);
  std::ofstream(full) << largest.dump(1);
  CliRun small = kernelrl({"eval", "--batch", batch.string(), "--check-expect", "--device", "cpu", "--size", "small"});
  std::filesystem::remove(batch);
  EXPECT_EQ(small.code, 0) << small.output;
  EXPECT_NE(small.output.find(std::to_string(host.size()) + " evaluated: OK " + std::to_string(host.size())),
            std::string::npos)
      << small.output;
  // Few timed calls: on a CPU every one redraws the full-size inputs first (seconds each).
  CliRun r = kernelrl({"eval", "--batch", full.string(), "--check-expect", "--device", "cpu", "--warmup", "1", "--min-reps",
                       "2", "--max-reps", "3"},
                      std::chrono::minutes(10));
  std::filesystem::remove(full);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("1 evaluated: OK 1"), std::string::npos) << r.output;
}

// tasks/fixtures/starter: one host solution of each kind of starter task (unary, with parameters,
// binary, row reduction, the two-pass log-sum-exp) is correct at the small size (all 49 in
// tasks/README.md; the native ones are for the GPU).
TEST(Cli, StarterFixturesOfEachKindAreCorrectOnTheCpu) {
  std::ifstream in(std::string(KERNELRL_SOURCE_DIR) + "/tasks/fixtures/starter/manifest.json");
  nlohmann::json all = nlohmann::json::parse(in), sample = nlohmann::json::array();
  for (const auto& e : all) {
    const std::string candidate = e.value("candidate", "");
    for (const char* op : {"/001_abs.", "/023_leaky_relu.", "/035_div.", "/043_row_mean.", "/049_row_logsumexp."}) {
      if (e.value("format", "") == "host" && candidate.find(op) != std::string::npos) sample.push_back(e);
    }
  }
  ASSERT_EQ(sample.size(), 5u);
  const auto batch = std::filesystem::temp_directory_path() / "kernelrl-starter-fixtures.json";
  std::ofstream(batch) << sample.dump(1);
  CliRun r = kernelrl({"eval", "--batch", batch.string(), "--check-expect", "--device", "cpu", "--size", "small"});
  std::filesystem::remove(batch);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("5 evaluated: OK 5"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kernelrl
