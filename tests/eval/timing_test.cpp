// CallTimer's protocol on the CPU: warm-up calls untimed, then timed calls up to max_reps;
// prepare before every call, after after every timed one; an error from either stops timing.
#include "eval/timing.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kernelrl::eval {
namespace {

EvalOptions small_options() {
  EvalOptions o;
  o.n_warmup = 3;
  o.min_reps = 2;
  o.max_reps = 7;
  o.timing_budget_ms = 1e9;  // never the limit here
  o.flush_l2 = false;
  return o;
}

TEST(CallTimer, PreparesEveryCallAndAuditsEveryTimedOne) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer) << timer.error().message;
  std::vector<std::string> log;
  auto times = (*timer)->run([&](int rep) { log.push_back("call " + std::to_string(rep)); return std::string(); },
                             small_options(), [&](int rep) { log.push_back("prepare " + std::to_string(rep)); },
                             [&](int rep) { log.push_back("after " + std::to_string(rep)); return std::string(); });
  ASSERT_TRUE(times) << times.error().message;
  EXPECT_EQ(times->size(), 7u);
  // 3 warm-ups (prepare, call), then 7 timed calls (prepare, call, after).
  ASSERT_EQ(log.size(), 3u * 2 + 7u * 3);
  EXPECT_EQ(log[0], "prepare 0");
  EXPECT_EQ(log[1], "call 0");
  EXPECT_EQ(log[6], "prepare 0");
  EXPECT_EQ(log[7], "call 0");
  EXPECT_EQ(log[8], "after 0");
  EXPECT_EQ(log.back(), "after 6");
}

TEST(CallTimer, AnAuditErrorStopsTiming) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer);
  int n_calls = 0;
  auto times = (*timer)->run([&](int) { ++n_calls; return std::string(); }, small_options(), {},
                             [&](int rep) { return rep == 2 ? std::string("audit of call 2 failed") : std::string(); });
  ASSERT_FALSE(times);
  EXPECT_EQ(times.error().message, "audit of call 2 failed");
  EXPECT_EQ(n_calls, 3 + 3);  // warm-ups, then timed calls 0, 1, 2
}

TEST(CallTimer, UntimedCallReturnsTheCallsError) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer);
  int n_calls = 0;
  EXPECT_EQ((*timer)->call_untimed([&] { ++n_calls; return std::string(); }, small_options()), "");
  EXPECT_EQ((*timer)->call_untimed([&] { ++n_calls; return std::string("bad"); }, small_options()), "bad");
  EXPECT_EQ(n_calls, 2);
}

}  // namespace
}  // namespace kernelrl::eval
