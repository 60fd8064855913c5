// The scaled phase limits (eval/time_limits.hpp): the rule itself, then the engine on a task whose
// draws and forwards are slow, where a fixed limit would call a correct candidate a TIMEOUT, and a
// hanging candidate that is still stopped at the scaled limit.
#include "eval/time_limits.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "engine_test_util.hpp"

namespace kernelrl::eval {
namespace {

using testing::source_path;

TEST(TimeLimits, TheFloorsHoldForQuickTasks) {
  EvalOptions o;  // floors 30 s and 120 s, multiple 10
  auto limits = scaled_phase_limits_s(o, {2.0, 3.0});
  EXPECT_DOUBLE_EQ(limits.at("correctness"), 30.0);
  EXPECT_DOUBLE_EQ(limits.at("timing"), 120.0);
  EXPECT_DOUBLE_EQ(limits.at("ref_timing"), 120.0);
}

TEST(TimeLimits, SlowTasksGetAMultipleOfTheirWorkPerCall) {
  EvalOptions o;
  // One second of work per call: 10 x 5 trials, 10 x (5 warm-up + 10 timed + 2 audits).
  auto limits = scaled_phase_limits_s(o, {400.0, 600.0});
  EXPECT_DOUBLE_EQ(limits.at("correctness"), 50.0);
  EXPECT_DOUBLE_EQ(limits.at("timing"), 170.0);
  EXPECT_DOUBLE_EQ(limits.at("ref_timing"), 170.0);
  o.n_trials = 10;
  o.timeout_eager_multiple = 4;
  limits = scaled_phase_limits_s(o, {400.0, 600.0});
  EXPECT_DOUBLE_EQ(limits.at("correctness"), 40.0);
  EXPECT_DOUBLE_EQ(limits.at("timing"), 120.0);  // 4 x 17 = 68 s, under the floor
  o.timeout_correctness_s = 50;
  EXPECT_DOUBLE_EQ(scaled_phase_limits_s(o, {400.0, 600.0}).at("correctness"), 50.0);
}

TEST(TimeLimits, NoMultipleOrNoWorkLeavesTheFloors) {
  EvalOptions o;
  o.timeout_eager_multiple = 0;
  EXPECT_DOUBLE_EQ(scaled_phase_limits_s(o, {1e6, 1e6}).at("correctness"), 30.0);
  o.timeout_eager_multiple = 10;
  EXPECT_DOUBLE_EQ(scaled_phase_limits_s(o, {-1e6, -1e6}).at("timing"), 120.0);
  EXPECT_EQ(calls_in_phase(o, "correctness"), 5);
  EXPECT_EQ(calls_in_phase(o, "timing"), 17);
}

// The limit in a TIMEOUT's message: "... ran past its limit of X s".
double limit_in_message(const std::string& message) {
  const std::string key = "its limit of ";
  auto at = message.find(key);
  return at == std::string::npos ? -1 : std::stod(message.substr(at + key.size()));
}

class ScaledLimitsEngineTest : public ::testing::Test {
 protected:
  // Three trials of 0.5 s each (a 0.25 s draw, the candidate, a 0.25 s reference) against a
  // correctness floor of 1 s.
  static EngineConfig slow_task_config(double multiple) {
    EngineConfig c = testing::test_config("cpu");
    c.options.n_trials = 3;
    c.options.timeout_correctness_s = 1;
    c.options.timeout_eager_multiple = multiple;
    return c;
  }
  static common::Expected<EvalResult> evaluate(const EngineConfig& config, const std::string& candidate) {
    auto engine = Engine::create(config);
    if (!engine) return engine.error();
    return (*engine)->evaluate({source_path(task_), source_path(candidate), std::nullopt, std::nullopt});
  }
  static inline const std::string task_ = "tests/data/tasks/slow_softmax.py";
};

TEST_F(ScaledLimitsEngineTest, ACorrectCandidateOnASlowTaskIsNotATimeout) {
  auto r = evaluate(slow_task_config(10), "tests/ladder/host/correct.cpp");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, common::Status::OK) << r->error.message;
  // What the limits were derived from is in the record.
  EXPECT_GE(r->phases_ms["setup.draw"], 240.0);
  EXPECT_GE(r->phases_ms["setup.reference"], 240.0);
  // With the multiple at 0 only the fixed 1 s limit is left, and the same candidate runs out of it.
  auto fixed = evaluate(slow_task_config(0), "tests/ladder/host/correct.cpp");
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->status, common::Status::TIMEOUT) << fixed->error.message;
  EXPECT_DOUBLE_EQ(limit_in_message(fixed->error.message), 1.0) << fixed->error.message;
}

TEST_F(ScaledLimitsEngineTest, AHangIsStoppedAtTheScaledLimit) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = evaluate(slow_task_config(2), "tests/ladder/host/infinite_loop.cpp");
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, common::Status::TIMEOUT) << r->error.message;
  // 2 x 3 trials x (>= 0.5 s of draw and forward): at least 3 s, and not far above it.
  const double limit_s = limit_in_message(r->error.message);
  EXPECT_GE(limit_s, 3.0) << r->error.message;
  EXPECT_LT(limit_s, 8.0) << r->error.message;
  EXPECT_LT(wall_s, 60.0);
}

}  // namespace
}  // namespace kernelrl::eval
