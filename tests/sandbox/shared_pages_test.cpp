// Shared pages and doorbells across a fork: what one process writes and rings, the other sees
// after its wait; a wait ends when asked to (the other process died) instead of hanging.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <new>
#include <thread>

#include "sandbox/shared_pages.hpp"

namespace kernelrl::sandbox {
namespace {

using namespace std::chrono_literals;

struct Exchange {
  Doorbell request, reply;
  char text[64];
};

TEST(SharedPages, AForkedProcessSeesTheWritesBehindEachRing) {
  auto pages = SharedPages::create(4096);
  ASSERT_TRUE(pages) << pages.error().message;
  auto* x = new (pages->data()) Exchange{};
  pid_t pid = ::fork();
  if (pid == 0) {
    // Answer three requests, sleeping in the futex for the first (no spin) and spinning for the rest.
    for (std::uint32_t i = 1; i <= 3; ++i) {
      if (!x->request.wait_for(i, i == 1 ? 0us : 100ms, 50ms, {})) _exit(2);
      x->text[0] = static_cast<char>('a' + i);
      x->reply.ring(i);
    }
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  for (std::uint32_t i = 1; i <= 3; ++i) {
    if (i == 1) std::this_thread::sleep_for(20ms);  // the other side is asleep by now
    x->request.ring(i);
    ASSERT_TRUE(x->reply.wait_for(i, 1ms, 50ms, [] { return true; }));
    EXPECT_EQ(x->text[0], static_cast<char>('a' + i));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SharedPages, AWaitEndsWhenItsConditionSaysSo) {
  auto pages = SharedPages::create(4096);
  ASSERT_TRUE(pages) << pages.error().message;
  auto* bell = new (pages->data()) Doorbell{};
  int polls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(bell->wait_for(7, 1ms, 5ms, [&] { return ++polls < 3; }));
  EXPECT_EQ(polls, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  bell->ring(7);
  EXPECT_TRUE(bell->wait_for(7, 0us, 5ms, [] { return false; }));
}

TEST(SharedPages, MovedPagesKeepTheirAddressAndUnmapOnce) {
  auto pages = SharedPages::create(1 << 20);
  ASSERT_TRUE(pages) << pages.error().message;
  std::byte* at = pages->data();
  std::memset(at, 1, 1 << 20);
  SharedPages moved = std::move(*pages);
  EXPECT_EQ(moved.data(), at);
  EXPECT_EQ(moved.size(), 1u << 20);
  EXPECT_EQ(pages->data(), nullptr);
}

// Pages in a memory file: another mapping of the same descriptor (as a program started with exec
// makes from the descriptor it inherits) sees the same bytes both ways, and the descriptor is
// close-on-exec until the caller hands it on.
TEST(SharedPages, AMemoryFileIsSeenThroughItsDescriptor) {
  auto pages = SharedPages::create_in_memory_file(8192);
  ASSERT_TRUE(pages) << pages.error().message;
  ASSERT_GE(pages->fd(), 0);
  EXPECT_NE(::fcntl(pages->fd(), F_GETFD) & FD_CLOEXEC, 0);
  auto other = SharedPages::map_memory_file(::dup(pages->fd()), 8192);
  ASSERT_TRUE(other) << other.error().message;
  std::memcpy(pages->data() + 5000, "written", 8);
  EXPECT_STREQ(reinterpret_cast<const char*>(other->data() + 5000), "written");
  std::memcpy(other->data(), "back", 5);
  EXPECT_STREQ(reinterpret_cast<const char*>(pages->data()), "back");
}

TEST(SharedPages, AnUnmappableDescriptorIsAnErrorNamingIt) {
  auto pages = SharedPages::map_memory_file(-1, 4096);
  ASSERT_FALSE(pages);
  EXPECT_NE(pages.error().message.find("descriptor -1"), std::string::npos) << pages.error().message;
}

}  // namespace
}  // namespace kernelrl::sandbox
