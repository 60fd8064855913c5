// OutsideWindows: a few long windows (noise a loaded machine charges to the runner) pass; work
// outside many calls, long or spread thin, is refused.
#include "eval/outside_windows.hpp"

#include <gtest/gtest.h>

namespace kernelrl::eval {
namespace {

OutsideWindows windows(int n, std::int64_t each_ns, OutsideLimits limits = kLoopOutside) {
  OutsideWindows w(limits);
  for (int i = 0; i < n; ++i) w.add(each_ns);
  return w;
}

TEST(OutsideWindows, AnHonestLoopPasses) {
  const OutsideWindows w = windows(150, 8'000);
  EXPECT_EQ(w.refusal(), std::nullopt);
  EXPECT_EQ(w.record("loop_cpu")["loop_cpu_long_windows"], 0);
}

// What refused an honest host candidate in CI: one loop window of 931 us among ~150.
TEST(OutsideWindows, OneLongWindowOnABusyMachinePasses) {
  OutsideWindows w = windows(150, 8'000);
  w.add(931'000);
  EXPECT_EQ(w.refusal(), std::nullopt);
  EXPECT_EQ(w.record("loop_cpu")["loop_cpu_long_windows"], 1);
}

// Answering early and finishing 300 us of work after each of 100 timed calls.
TEST(OutsideWindows, WorkAfterManyCallsIsRefusedByTheirNumber) {
  OutsideWindows w = windows(50, 8'000);
  for (int i = 0; i < 100; ++i) w.add(300'000);
  const auto refused = w.refusal();
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("in 100 of 150 windows"), std::string::npos) << *refused;
}

// Work under the per-window limit, on every call: only the total shows it.
TEST(OutsideWindows, WorkSpreadThinOverEveryCallIsRefusedByTheTotal) {
  const auto refused = windows(150, 150'000).refusal();
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("in all between 150 requests"), std::string::npos) << *refused;
}

// 20 ms of work after each of three calls (tests/adversarial/host/rings_done_early.cpp) is refused
// by the process's limit as soon as the third is seen.
TEST(OutsideWindows, AProcessRefusedAfterAFewLongWindows) {
  OutsideWindows w(kProcessOutside);
  w.add(20'000'000);
  w.add(20'000'000);
  EXPECT_EQ(w.refusal(), std::nullopt);
  w.add(20'000'000);
  ASSERT_TRUE(w.refusal().has_value());
  EXPECT_NE(w.refusal()->find("the candidate's process used"), std::string::npos) << *w.refusal();
  EXPECT_FALSE(w.record("process_cpu").contains("process_cpu_budget_us"));  // no total limit
}

TEST(OutsideWindows, TheAllowanceGrowsWithTheNumberOfWindowsButStaysFarFromAMedian) {
  EXPECT_EQ(windows(10, 0).long_windows_allowed(), OutsideWindows::kLongWindowsAllowed);
  EXPECT_EQ(windows(400, 0).long_windows_allowed(), 20);
  EXPECT_LT(windows(400, 0).long_windows_allowed() * 2, 400);
}

}  // namespace
}  // namespace kernelrl::eval
