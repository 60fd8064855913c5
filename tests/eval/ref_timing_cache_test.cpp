// The reference timing kept per task (eval/ref_timing_cache.hpp): the fastest median offered wins,
// whatever the order the parallel evaluations offer theirs in, so a reference slowed beside one
// candidate never sets the speedups of the others; keys are kept apart and empty timings ignored.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "eval/ref_timing_cache.hpp"

namespace kernelrl::eval {
namespace {

TimingSummary timing(double median_us) {
  TimingSummary t;
  t.n = 100;
  t.median_us = median_us;
  return t;
}

TEST(RefTimingCache, TheFastestMedianOfferedIsKept) {
  RefTimingCache cache;
  EXPECT_FALSE(cache.find("softmax/cuda"));
  EXPECT_TRUE(cache.offer("softmax/cuda", timing(39.2)));
  EXPECT_TRUE(cache.offer("softmax/cuda", timing(38.1)));
  // The soak's case: timed beside a 1.5 ms candidate, offered last.
  EXPECT_FALSE(cache.offer("softmax/cuda", timing(80.2)));
  ASSERT_TRUE(cache.find("softmax/cuda"));
  EXPECT_DOUBLE_EQ(cache.find("softmax/cuda")->median_us, 38.1);
}

TEST(RefTimingCache, KeysAreApartAndEmptyTimingsAreIgnored) {
  RefTimingCache cache;
  EXPECT_FALSE(cache.offer("a", TimingSummary{}));
  EXPECT_FALSE(cache.offer("a", timing(0)));
  EXPECT_FALSE(cache.find("a"));
  cache.offer("a", timing(10));
  cache.offer("b", timing(500));
  EXPECT_DOUBLE_EQ(cache.find("a")->median_us, 10);
  EXPECT_DOUBLE_EQ(cache.find("b")->median_us, 500);
}

TEST(RefTimingCache, OffersFromManyThreadsKeepTheFastest) {
  RefTimingCache cache;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 1000; ++i) cache.offer("task", timing(100.0 + ((t * 1000 + i) * 7919 % 5000)));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_DOUBLE_EQ(cache.find("task")->median_us, 100.0);
}

}  // namespace
}  // namespace kernelrl::eval
