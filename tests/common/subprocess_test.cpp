// common::run_process: limits that reach the child (niceness, file size, wall time) and output
// capture, with small shell commands.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "common/subprocess.hpp"

namespace kernelrl::common {
namespace {

TEST(run_process, NiceLowersTheChildsPriority) {
  RunLimits limits;
  limits.nice = 10;
  auto r = run_process({"nice"}, {}, {}, limits);  // coreutils' nice prints the niceness it runs at
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->ok()) << r->output;
  const int ours = ::getpriority(PRIO_PROCESS, 0);
  EXPECT_EQ(std::stoi(r->output), std::min(19, ours + 10));
  auto plain = run_process({"nice"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(std::stoi(plain->output), ours) << "no change unless asked";
}

TEST(run_process, StaysInTheCallersProcessGroupOnlyWhenAsked) {
  auto pgid_of_child = [](bool own) {
    RunLimits limits;
    limits.own_process_group = own;
    auto r = run_process({"cut", "-d", " ", "-f5", "/proc/self/stat"}, {}, {}, limits);  // field 5: its process group
    return r.ok() && r->ok() ? std::stol(r->output) : -1L;
  };
  EXPECT_EQ(pgid_of_child(false), static_cast<long>(::getpgrp()));
  EXPECT_NE(pgid_of_child(true), static_cast<long>(::getpgrp())) << "by default a group of its own";
}

TEST(run_process, WallTimeKillsAndOutputIsCaptured) {
  RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(300);
  auto r = run_process({"sh", "-c", "echo started; sleep 5"}, {}, {}, limits);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->output, "started\n");
  EXPECT_LT(r->wall_ms, 3000);
}

}  // namespace
}  // namespace kernelrl::common
