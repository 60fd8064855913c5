#include "common/gpu_list.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kernelrl::common {
namespace {

TEST(GpuList, AllMeansTheSchedulersAllocationWhenThereIsOne) {
  ::setenv("CUDA_VISIBLE_DEVICES", "4,5,GPU-1234", 1);
  auto all = resolve_gpus("all");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, (std::vector<std::string>{"4", "5", "GPU-1234"}));
}

TEST(GpuList, AListIsTakenAsGivenAndItsBadEntriesNamed) {
  auto listed = resolve_gpus("0,2");
  ASSERT_TRUE(listed);
  EXPECT_EQ(*listed, (std::vector<std::string>{"0", "2"}));
  auto bad = resolve_gpus("0,x");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("--gpus: 'x'"), std::string::npos);
  EXPECT_FALSE(resolve_gpus(","));
  auto twice = resolve_gpus("1,0,1");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("'1' is listed twice"), std::string::npos);
}

TEST(GpuList, SplitCommasDropsEmptyParts) {
  EXPECT_EQ(split_commas("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_commas("").empty());
}

}  // namespace
}  // namespace kernelrl::common
