// CallTimer's protocol on the CPU: warm-up calls untimed, then timed calls up to max_reps;
// prepare before every call, after after every timed one; an error from either stops timing; two
// calls timed as alternating pairs.
#include "eval/timing.hpp"

#include <gtest/gtest.h>

#include <chrono>
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
  auto times = (*timer)->run([&](int rep) -> common::Fallible { log.push_back("call " + std::to_string(rep)); return common::Ok{}; },
                             small_options(), [&](int rep) { log.push_back("prepare " + std::to_string(rep)); },
                             [&](int rep) -> common::Fallible { log.push_back("after " + std::to_string(rep)); return common::Ok{}; });
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
  auto times = (*timer)->run([&](int) -> common::Fallible { ++n_calls; return common::Ok{}; }, small_options(), {},
                             [&](int rep) -> common::Fallible {
                               if (rep == 2) return common::make_error("audit of call 2 failed");
                               return common::Ok{};
                             });
  ASSERT_FALSE(times);
  EXPECT_EQ(times.error().message, "audit of call 2 failed");
  EXPECT_EQ(n_calls, 3 + 3);  // warm-ups, then timed calls 0, 1, 2
}

TEST(CallTimer, PairedCallsAlternateAndShareTheirInputsRep) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer);
  std::vector<std::string> log;
  auto logged = [&](const std::string& what) {
    return [&log, what](int rep) -> common::Fallible {
      log.push_back(what + " " + std::to_string(rep));
      return common::Ok{};
    };
  };
  auto times = (*timer)->run_paired(logged("a"), logged("b"), small_options(),
                                    [&](int rep) { log.push_back("prepare " + std::to_string(rep)); },
                                    logged("after"));
  ASSERT_TRUE(times) << times.error().message;
  EXPECT_EQ(times->a_ms.size(), 7u);
  EXPECT_EQ(times->b_ms.size(), 7u);
  // Warm-ups: 3 of a (each prepared), then 3 of b; then 7 pairs: prepare, a, after, b.
  ASSERT_EQ(log.size(), 3u * 2 + 3u + 7u * 4);
  EXPECT_EQ(log[5], "a 2");
  EXPECT_EQ(log[6], "b 0");
  EXPECT_EQ(log[8], "b 2");
  const std::vector<std::string> first_pair{"prepare 0", "a 0", "after 0", "b 0"};
  EXPECT_EQ(std::vector<std::string>(log.begin() + 9, log.begin() + 13), first_pair);
  EXPECT_EQ(log.back(), "b 6");
}

TEST(CallTimer, PairedTimingStopsAtTheJointBudget) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer);
  EvalOptions o = small_options();
  o.min_reps = 2;
  o.max_reps = 1000;
  o.timing_budget_ms = 2;  // the pairs stop once a + b reach 4 ms: with b sleeping 1 ms, after about 4 pairs
  auto times = (*timer)->run_paired([](int) -> common::Fallible { return common::Ok{}; },
                                    [](int) -> common::Fallible {
                                      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
                                      while (std::chrono::steady_clock::now() < until) {
                                      }
                                      return common::Ok{};
                                    },
                                    o);
  ASSERT_TRUE(times) << times.error().message;
  EXPECT_GE(times->b_ms.size(), 2u);
  EXPECT_LE(times->b_ms.size(), 5u);
  EXPECT_GE(times->b_ms[0], 0.9);
  EXPECT_LT(times->a_ms[0], times->b_ms[0]);
}

TEST(CallTimer, UntimedCallReturnsTheCallsError) {
  auto timer = CallTimer::create(false, nullptr, 0);
  ASSERT_TRUE(timer);
  int n_calls = 0;
  EXPECT_TRUE((*timer)->call_untimed([&]() -> common::Fallible { ++n_calls; return common::Ok{}; }, small_options()));
  auto failed = (*timer)->call_untimed([&]() -> common::Fallible { ++n_calls; return common::make_error("bad"); },
                                       small_options());
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "bad");
  EXPECT_EQ(n_calls, 2);
}

}  // namespace
}  // namespace kernelrl::eval
