// The engine on a GPU (label `gpu`): the native ladder classified right, each rung followed by a
// correct candidate that must still score OK, and the shipped native examples correct and timed.
// Without a usable GPU every test here is reported as SKIPPED, never as passed.
#include <gtest/gtest.h>

#include "eval/batch_file.hpp"
#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

using testing::source_path;

class EngineGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = Engine::create(testing::test_config("auto"));
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

TEST_F(EngineGpuTest, NativeLadderIsClassifiedAndTheEngineKeepsWorking) {
  auto entries = read_batch_file(source_path("tests/ladder/ladder.json"));
  ASSERT_TRUE(entries) << entries.error().message;
  const EvalJob correct{source_path("tests/ladder/task_softmax.py"), source_path("tests/ladder/native/correct_fast.cu"),
                        std::nullopt, std::nullopt};
  int n = 0;
  for (const auto& e : *entries) {
    if (e.device.value_or("cpu") != "cuda" || !e.expect) continue;
    ++n;
    auto r = engine_->evaluate(e.job);
    ASSERT_TRUE(r) << e.job.candidate << ": " << r.error().message;
    EXPECT_EQ(common::to_string(r->status), common::to_string(*e.expect))
        << e.job.candidate << ": " << r->error.message << "\n" << r->error.compile_log;
    std::printf("ladder %-28s %-14s %s\n", e.job.candidate.filename().c_str(),
                std::string(common::to_string(r->status)).c_str(), r->error.message.substr(0, 110).c_str());
    auto after = engine_->evaluate(correct);
    ASSERT_TRUE(after) << after.error().message;
    EXPECT_EQ(after->status, common::Status::OK) << "after " << e.job.candidate << ": " << after->error.message;
  }
  EXPECT_GE(n, 8);
}

TEST_F(EngineGpuTest, NativeExamplesAreCorrectAndTimed) {
  for (const char* ex : {"vector_add", "softmax", "linear_relu"}) {
    std::string dir = std::string("examples/") + ex;
    auto r = engine_->evaluate({source_path(dir + "/task.py"), source_path(dir + "/native.cu"), std::nullopt, std::nullopt});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->status, common::Status::OK) << ex << ": " << r->error.message;
    EXPECT_GT(r->runtime_us, 0);
    EXPECT_GT(r->ref_runtime_us, 0);
    ASSERT_TRUE(r->device_info.is_object()) << ex << ": " << r->error.message;
    EXPECT_EQ(r->device_info.value("compute_capability", ""), "9.0");
    std::printf("example %-12s runtime %.1f us  ref %.1f us  speedup %.3fx  phases: setup %.0f load %.0f check %.0f timing %.0f ms\n",
                ex, r->runtime_us, r->ref_runtime_us, r->speedup, r->phases_ms["setup"], r->phases_ms["load"],
                r->phases_ms["correctness"], r->phases_ms["timing"]);
  }
}

}  // namespace
}  // namespace kernelrl::eval
