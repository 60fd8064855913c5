// The engine on a GPU (label `gpu`): the native ladder and the native adversarial corpus classified
// right, each entry followed by a correct candidate that must still score OK, and the shipped
// native examples correct and timed.
// Without a usable GPU every test here is reported as SKIPPED, never as passed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "eval/batch_file.hpp"
#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

using testing::known_gap_entries;
using testing::source_path;

// Where candidates run: as by default (native and kernelbench ones in a process of their own on a
// GPU), or all in the evaluating child.
enum class Apart { DEFAULTS, NONE };

EngineConfig gpu_config(Apart apart) {
  EngineConfig config = testing::test_config("auto");
  if (apart == Apart::NONE) {
    config.options.kernelbench_candidate_process = CandidateProcess::NEVER;
    config.options.native_candidate_process = false;
  }
  return config;
}

// One engine per fixture, made once.
template <Apart kApart>
class GpuEngineFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    EngineConfig config = gpu_config(kApart);
    auto e = Engine::create(config);
    if (!e) {
      setup_error_ = e.error().message;
      return;
    }
    engine_ = std::move(*e);
  }
  static void TearDownTestSuite() {
    engine_.reset();
    std::filesystem::remove_all(testing::test_cache_dir());
  }
  void SetUp() override {
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    if (engine_->device() != "cuda") GTEST_SKIP() << "SKIPPED: no usable GPU on this machine";
  }
  static inline std::unique_ptr<Engine> engine_;
  static inline std::string setup_error_;
};

// Candidates in the evaluating child.
using EngineGpuTest = GpuEngineFixture<Apart::NONE>;
// Native candidates in a process of their own (eval/device_runner.hpp): the default on a GPU.
using NativeCandidateProcessGpuTest = GpuEngineFixture<Apart::DEFAULTS>;
// kernelbench candidates in a process of their own (eval/kernelbench_runner.hpp): the default on a GPU.
using KernelbenchCandidateProcessGpuTest = GpuEngineFixture<Apart::DEFAULTS>;

const EvalJob& correct_native() {
  static const EvalJob job{source_path("tests/ladder/task_softmax.py"), source_path("tests/ladder/native/correct_fast.cu"),
                           std::nullopt, std::nullopt};
  return job;
}

// Every GPU entry of the ladder gets its expected status, and the correct candidate evaluated right
// after each still scores OK.
void expect_ladder_classified(Engine& engine) {
  auto entries = read_batch_file(source_path("tests/ladder/ladder.json"));
  ASSERT_TRUE(entries) << entries.error().message;
  int n = 0;
  for (const auto& e : *entries) {
    if (e.device.value_or("cpu") != "cuda" || !e.expect) continue;
    ++n;
    auto r = engine.evaluate(e.job);
    ASSERT_TRUE(r) << e.job.candidate << ": " << r.error().message;
    EXPECT_EQ(common::to_string(r->status), common::to_string(*e.expect))
        << e.job.candidate << ": " << r->error.message << "\n" << r->error.compile_log;
    std::printf("ladder %-28s %-14s %s\n", e.job.candidate.filename().c_str(),
                std::string(common::to_string(r->status)).c_str(), r->error.message.substr(0, 110).c_str());
    auto after = engine.evaluate(correct_native());
    ASSERT_TRUE(after) << after.error().message;
    EXPECT_EQ(after->status, common::Status::OK) << "after " << e.job.candidate << ": " << after->error.message;
  }
  EXPECT_GE(n, 8);
}

TEST_F(EngineGpuTest, NativeLadderIsClassifiedAndTheEngineKeepsWorking) { expect_ladder_classified(*engine_); }

TEST_F(NativeCandidateProcessGpuTest, NativeLadderIsClassifiedAndTheEngineKeepsWorking) {
  expect_ladder_classified(*engine_);
}

// Entries whose zero-score outcome depends on the machine's speed list the other statuses they
// may get in "also_accepted" (printf_flood: the 64 MB file limit or, where the driver formats
// device printf output slowly, the phase's time limit first).
std::map<std::size_t, std::set<std::string>> also_accepted(const std::string& batch_file) {
  std::map<std::size_t, std::set<std::string>> out;
  auto text = common::read_file(source_path(batch_file));
  auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!j.is_array()) return out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (j[i].is_object() && j[i].contains("also_accepted")) out[i] = j[i]["also_accepted"].get<std::set<std::string>>();
  }
  return out;
}

// Every "device": "cuda" entry of the adversarial corpus (known gaps aside) gets its expected
// status, and the correct native candidate evaluated right after each still scores OK: a hack
// must not leave the device, the worker or the engine unusable (memory bombs, sticky errors).
// `in_process`: the engine runs native candidates in the evaluating child (--native-in-child), whose
// layers do not stop what an entry marked "stopped_only_apart" does (a file made by a raw system call).
void expect_corpus_scores_zero(Engine& engine, const std::string& corpus = "tests/adversarial/adversarial.json",
                               bool in_process = false, int min_entries = 7) {
  auto entries = read_batch_file(source_path(corpus));
  ASSERT_TRUE(entries) << entries.error().message;
  const std::set<std::size_t> gaps = known_gap_entries(corpus);
  std::set<std::size_t> apart_only;
  if (auto text = common::read_file(source_path(corpus))) {
    auto j = nlohmann::json::parse(*text, nullptr, false);
    for (std::size_t i = 0; j.is_array() && i < j.size(); ++i) {
      if (j[i].is_object() && j[i].value("stopped_only_apart", false)) apart_only.insert(i);
    }
  }
  auto alternatives = also_accepted(corpus);
  int n = 0;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& e = (*entries)[i];
    if (e.device.value_or("cpu") != "cuda" || !e.expect) continue;
    if (gaps.contains(i)) {
      std::printf("adversarial %-34s known gap, not run\n", e.job.candidate.filename().c_str());
      continue;
    }
    if (in_process && apart_only.contains(i)) {  // the runtime layers of the candidate's own process
      std::printf("adversarial %-34s stopped only apart (--native-in-child is a baseline, docs/security.md), not run\n",
                  e.job.candidate.filename().c_str());
      continue;
    }
    ++n;
    auto r = engine.evaluate(e.job);
    ASSERT_TRUE(r) << e.job.candidate << ": " << r.error().message;
    const std::string status(common::to_string(r->status));
    if (!alternatives[i].contains(status)) {
      EXPECT_EQ(status, common::to_string(*e.expect)) << e.job.candidate << ": " << r->error.message << "\n"
                                                      << r->error.compile_log;
    }
    if (r->status != common::Status::OK) {
      EXPECT_FALSE(r->correct) << e.job.candidate;
      EXPECT_EQ(r->speedup, 0) << e.job.candidate;
      EXPECT_FALSE(r->error.message.empty()) << e.job.candidate;
    }
    std::printf("adversarial %-34s %-14s %s\n", e.job.candidate.filename().c_str(),
                std::string(common::to_string(r->status)).c_str(), r->error.message.substr(0, 110).c_str());
    auto after = engine.evaluate(correct_native());
    ASSERT_TRUE(after) << "after " << e.job.candidate << ": " << after.error().message;
    EXPECT_EQ(after->status, common::Status::OK) << "after " << e.job.candidate << ": " << after->error.message;
  }
  EXPECT_GE(n, min_entries);
}

TEST_F(EngineGpuTest, AdversarialCorpusOnTheGpuScoresZero) {
  expect_corpus_scores_zero(*engine_, "tests/adversarial/adversarial.json", true);
}

TEST_F(NativeCandidateProcessGpuTest, AdversarialCorpusOnTheGpuScoresZero) { expect_corpus_scores_zero(*engine_); }

// The layers behind the static scans with the scans off (tests/adversarial/runtime_layers.json): a
// native candidate creating a file by a prefixed raw syscall is killed by its process's filter.
TEST_F(NativeCandidateProcessGpuTest, BehindTheStaticScansTheRuntimeLayersHold) {
  EngineConfig config = gpu_config(Apart::DEFAULTS);
  config.system_access_check = false;
  auto unchecked = Engine::create(config);
  ASSERT_TRUE(unchecked) << unchecked.error().message;
  // One GPU entry there (the rest are the CPU's): the H100 run of 2026-12-07 refused it as meant
  // but failed the corpus's count of 7 meant for the adversarial corpus.
  expect_corpus_scores_zero(**unchecked, "tests/adversarial/runtime_layers.json", false, 1);
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/kernelrl-planted-native"));
}

// Candidates in their own process: OK, judged by the child (the result says the candidate ran apart
// and was timed on the host clock, less an idle call's), and timed as in the child: each example's
// runtime and the reference's, medians of 3 evaluations alternating between `engine` and one that
// runs the candidate in the child, within 25% of each other. A GPU switching between the two processes' contexts
// inside the timed calls (~0.3 ms each on an H200) fails this.
void expect_timed_as_in_the_child(Engine& engine, const std::vector<std::string>& examples) {
  auto in_child = Engine::create(gpu_config(Apart::NONE));
  ASSERT_TRUE(in_child) << in_child.error().message;
  const auto median3 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (const std::string& ex : examples) {
    const std::string dir = "examples/" + ex.substr(0, ex.find('/'));
    const EvalJob job{source_path(dir + "/task.py"), source_path("examples/" + ex), std::nullopt, std::nullopt};
    std::vector<double> apart, here, ref_apart, ref_here, idle;
    for (int i = 0; i < 3; ++i) {
      auto a = engine.evaluate(job);
      ASSERT_TRUE(a) << a.error().message;
      ASSERT_EQ(a->status, common::Status::OK) << ex << ": " << a->error.message;
      EXPECT_TRUE(a->isolation["candidate_process"].value("separate", false)) << a->isolation.dump();
      ASSERT_TRUE(a->isolation.contains("timed_apart")) << a->isolation.dump();
      idle.push_back(a->isolation["timed_apart"].value("idle_call_us", 0.0));
      auto b = (*in_child)->evaluate(job);
      ASSERT_TRUE(b) << b.error().message;
      ASSERT_EQ(b->status, common::Status::OK) << ex << ": " << b->error.message;
      apart.push_back(a->runtime_us), here.push_back(b->runtime_us);
      ref_apart.push_back(a->ref_runtime_us), ref_here.push_back(b->ref_runtime_us);
    }
    const double ratio = median3(apart) / median3(here), ref_ratio = median3(ref_apart) / median3(ref_here);
    std::printf("candidate process %-26s runtime %.1f us apart vs %.1f in the child (x%.3f); reference %.1f vs %.1f "
                "(x%.3f); speedup %.3f vs %.3f; idle call %.1f us\n",
                ex.c_str(), median3(apart), median3(here), ratio, median3(ref_apart), median3(ref_here), ref_ratio,
                median3(ref_apart) / median3(apart), median3(ref_here) / median3(here), median3(idle));
    EXPECT_LT(ratio, 1.25) << ex;
    EXPECT_GT(ratio, 0.8) << ex;
  }
}

TEST_F(NativeCandidateProcessGpuTest, NativeExamplesAreTimedAsInTheChild) {
  expect_timed_as_in_the_child(*engine_, {"vector_add/native.cu", "softmax/native.cu", "linear_relu/native.cu"});
}

TEST_F(KernelbenchCandidateProcessGpuTest, KernelbenchExampleIsTimedAsInTheChild) {
  expect_timed_as_in_the_child(*engine_, {"vector_add/kernelbench.py"});
}

TEST_F(EngineGpuTest, NativeAndKernelbenchExamplesAreCorrectAndTimed) {
  for (const std::string ex : {"vector_add/native.cu", "softmax/native.cu", "linear_relu/native.cu",
                               "vector_add/kernelbench.py"}) {
    const std::string dir = "examples/" + ex.substr(0, ex.find('/'));
    auto r = engine_->evaluate({source_path(dir + "/task.py"), source_path("examples/" + ex), std::nullopt, std::nullopt});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->status, common::Status::OK) << ex << ": " << r->error.message;
    EXPECT_GT(r->runtime_us, 0);
    EXPECT_GT(r->ref_runtime_us, 0);
    ASSERT_TRUE(r->device_info.is_object()) << ex << ": " << r->error.message;
    EXPECT_EQ(r->device_info.value("compute_capability", ""), "9.0");
    std::printf("example %-26s runtime %.1f us  ref %.1f us  speedup %.3fx  phases: setup %.0f load %.0f check %.0f timing %.0f ms\n",
                ex.c_str(), r->runtime_us, r->ref_runtime_us, r->speedup, r->phases_ms["setup"], r->phases_ms["load"],
                r->phases_ms["correctness"], r->phases_ms["timing"]);
  }
}

// The kernelbench corpus (tests/kernelbench_corpus): honest load_inline candidates written the way
// models write them must come out OK with a plausible runtime, and the kernelbench hacks not OK,
// each with its exact expected status under its rule set, all through the batch path (compiles in
// parallel, evaluations as they finish). A rule that refuses honest work fails here.
// `exact`: every entry gets its expected status (or one also accepted); otherwise hacks need only
// score zero (a candidate in its own process that patches torch or the task changes only its own
// interpreter: judged on its own outputs, it is WRONG_OUTPUT where in process it is REJECTED).
void expect_kernelbench_corpus_classified(Engine& engine, bool exact) {
  const std::string corpus = "tests/kernelbench_corpus/manifest.json";
  auto entries = read_batch_file(source_path(corpus));
  ASSERT_TRUE(entries) << entries.error().message;
  auto alternatives = also_accepted(corpus);
  std::vector<EvalJob> jobs;
  std::vector<std::size_t> index;  // jobs[k] is entries[index[k]]
  for (std::size_t i = 0; i < entries->size(); ++i) {
    if ((*entries)[i].device.value_or("cpu") != "cuda" || !(*entries)[i].expect) continue;
    jobs.push_back((*entries)[i].job);
    index.push_back(i);
  }
  std::map<std::string, int> by_status;
  int n_honest_ok = 0, n_honest = 0;
  auto results = engine.evaluate_batch(jobs, [&](std::size_t k, const common::Expected<EvalResult>& r) {
    const auto& e = (*entries)[index[k]];
    const std::string rules(common::to_string(e.job.rules.value_or(common::RuleSet::STRICT)));
    if (!r) {
      ADD_FAILURE() << e.job.candidate << " (" << rules << "): " << r.error().message;
      return;
    }
    const std::string status(common::to_string(r->status));
    ++by_status[status];
    const bool honest = *e.expect == common::Status::OK;
    n_honest += honest;
    n_honest_ok += honest && r->status == common::Status::OK;
    if (!exact && !honest) {
      EXPECT_NE(r->status, common::Status::OK) << e.job.candidate << " (" << rules << ")";
    } else if (!alternatives[index[k]].contains(status)) {
      EXPECT_EQ(status, common::to_string(*e.expect))
          << e.job.candidate << " (" << rules << "): " << r->error.message << "\n" << r->error.compile_log;
    }
    EXPECT_EQ(r->rules, rules) << e.job.candidate;
    if (r->status == common::Status::OK) {
      EXPECT_GT(r->runtime_us, 0) << e.job.candidate;
      EXPECT_GT(r->ref_runtime_us, 0) << e.job.candidate;
    } else {
      EXPECT_EQ(r->speedup, 0) << e.job.candidate;
    }
    std::printf("kb-corpus %-40s %-11s %-14s runtime %9.1f us  ref %9.1f us  speedup %6.3fx  compile %6.0f ms  %s\n",
                e.job.candidate.filename().c_str(), rules.c_str(), status.c_str(), r->runtime_us, r->ref_runtime_us,
                r->speedup, r->phases_ms.count("compile") ? r->phases_ms.at("compile") : 0.0,
                r->error.message.substr(0, 100).c_str());
    std::fflush(stdout);
  });
  EXPECT_EQ(results.size(), jobs.size());
  std::string counts;
  for (const auto& [status, n] : by_status) counts += " " + status + " " + std::to_string(n);
  std::printf("kb-corpus summary: %zu entries, honest OK %d of %d;%s\n", jobs.size(), n_honest_ok, n_honest,
              counts.c_str());
  EXPECT_GE(n_honest, 30);
}

TEST_F(EngineGpuTest, KernelbenchCorpusIsClassifiedUnderItsRules) { expect_kernelbench_corpus_classified(*engine_, true); }

TEST_F(KernelbenchCandidateProcessGpuTest, KernelbenchCorpusScoresAsInTheChild) {
  expect_kernelbench_corpus_classified(*engine_, false);
}

}  // namespace
}  // namespace kernelrl::eval
