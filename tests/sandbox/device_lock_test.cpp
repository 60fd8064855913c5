// The device lock between workers: shared holders overlap, an exclusive holder is alone, and a
// waiting exclusive request goes before later shared ones. Each DeviceLock object is its own open
// file, so threads here conflict exactly as worker processes do.
#include "sandbox/device_lock.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

namespace kernelrl::sandbox {
namespace {

using Mode = DeviceLock::Mode;
using namespace std::chrono_literals;

class DeviceLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kernelrl-lock-test-" + std::to_string(::getpid()));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  DeviceLock open() {
    auto l = DeviceLock::open(dir_);
    EXPECT_TRUE(l) << l.error().message;
    return std::move(*l);
  }
  std::filesystem::path dir_;
};

TEST_F(DeviceLockTest, SharedHoldersOverlap) {
  DeviceLock a = open(), b = open();
  a.acquire(Mode::SHARED);
  std::atomic<bool> got{false};
  std::thread t([&] {
    b.acquire(Mode::SHARED);
    got = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(got);
  t.join();
}

TEST_F(DeviceLockTest, ExclusiveWaitsForSharedAndGoesBeforeLaterShared) {
  DeviceLock reader = open(), writer = open(), late_reader = open();
  reader.acquire(Mode::SHARED);
  std::atomic<int> order{0}, writer_at{0}, late_at{0};
  std::thread w([&] {
    writer.acquire(Mode::EXCLUSIVE);
    writer_at = ++order;
    std::this_thread::sleep_for(100ms);
    writer.acquire(Mode::NONE);
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(writer_at, 0) << "exclusive granted while a shared holder is in";
  std::thread r([&] {
    late_reader.acquire(Mode::SHARED);
    late_at = ++order;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(late_at, 0) << "a later shared request jumped the waiting exclusive one";
  reader.acquire(Mode::NONE);
  w.join();
  r.join();
  EXPECT_EQ(writer_at, 1);
  EXPECT_EQ(late_at, 2);
}

TEST_F(DeviceLockTest, ModesOnlyGoUp) {
  EXPECT_EQ(raised_mode(Mode::SHARED, Mode::NONE), Mode::SHARED);
  EXPECT_EQ(raised_mode(Mode::SHARED, Mode::SHARED), Mode::SHARED);
  EXPECT_EQ(raised_mode(Mode::EXCLUSIVE, Mode::SHARED), Mode::EXCLUSIVE);
  EXPECT_EQ(raised_mode(Mode::EXCLUSIVE, Mode::NONE), Mode::EXCLUSIVE);
  EXPECT_EQ(raised_mode(Mode::SHARED, Mode::EXCLUSIVE), Mode::EXCLUSIVE);  // no way back down
  EXPECT_EQ(raised_mode(Mode::NONE, Mode::SHARED), Mode::SHARED);
}

TEST_F(DeviceLockTest, UnwritableFolderIsAnErrorNamingIt) {
  auto l = DeviceLock::open("/proc/kernelrl-no-such-dir");
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message.find("/proc/kernelrl-no-such-dir"), std::string::npos) << l.error().message;
}

}  // namespace
}  // namespace kernelrl::sandbox
