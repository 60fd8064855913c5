// eval/held_memory: the limit on device memory a trial's call keeps, and the refusal it gives.
#include "eval/held_memory.hpp"

#include <gtest/gtest.h>

namespace kernelrl::eval {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

TEST(held_memory, LimitIsAQuarterOfTheDeviceUnlessGiven) {
  EXPECT_EQ(held_memory_limit(140 * kGiB, 0), 35 * kGiB);
  EXPECT_EQ(held_memory_limit(140 * kGiB, 512), 512ull << 20);
}

TEST(held_memory, OnlyADropBeyondTheLimitIsRefused) {
  const std::uint64_t limit = 35 * kGiB;
  EXPECT_FALSE(held_memory_refusal(100 * kGiB, 100 * kGiB, 100 * kGiB, limit));
  EXPECT_FALSE(held_memory_refusal(100 * kGiB, 101 * kGiB, 101 * kGiB, limit)) << "memory freed meanwhile";
  EXPECT_FALSE(held_memory_refusal(100 * kGiB, 65 * kGiB, 65 * kGiB, limit)) << "exactly the limit";
  EXPECT_TRUE(held_beyond(100 * kGiB, 64 * kGiB, limit));
  EXPECT_FALSE(held_memory_refusal(139 * kGiB, 2 * kGiB, 138 * kGiB, limit))
      << "back by the second reading: another evaluation's memory for a moment (a bomb that frees)";
  auto refused = held_memory_refusal(139 * kGiB, 2 * kGiB, 2 * kGiB, limit);  // hoards_device_memory.cu's pattern
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("held 140288 MiB of device memory"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("limit 35840 MiB"), std::string::npos) << *refused;
}

}  // namespace
}  // namespace kernelrl::eval
