// The runners' request loop (runner/protocol.hpp: serve) on any machine, in a forked process as the
// child forks it: ARM runs the runner's flush, IDLE waits for the runner's device (its `finish`) and
// answers without a candidate call, a PING after it keeps IDLE's answer, a CALL before any LOAD
// fails, and EXIT ends the loop cleanly. The child times ARM, IDLE and PING to learn what its clock
// costs around a call (eval/child_timing.cpp), so IDLE must run no candidate code at all.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "runner/protocol.hpp"

namespace kernelrl::runner {
namespace {

using namespace std::chrono_literals;

// What the forked loop's hooks saw, in the shared data region (the loop's process writes it).
struct Seen {
  int flushes = 0;
  int finishes = 0;
};

class ServeLoop : public testing::Test {
 protected:
  void SetUp() override {
    auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset + 4096);
    ASSERT_TRUE(pages) << pages.error().message;
    pages_.emplace(std::move(*pages));
    h_ = new (pages_->data()) Header{};
    seen_ = new (pages_->data() + kDataOffset) Seen{};
    h_->reply.ring(1);  // the set-up answer a runner gives before its loop
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      RunnerHooks hooks;
      hooks.data = pages_->data() + kDataOffset;
      hooks.data_bytes = 4096;
      hooks.flush = [](void* state) { ++static_cast<Seen*>(state)->flushes; };
      hooks.finish = [](void* state) -> const char* {
        ++static_cast<Seen*>(state)->finishes;
        return "the device is broken";  // IDLE leaves this to the next call
      };
      hooks.state = seen_;
      serve(h_, parent, "/nonexistent.so", hooks);
    }
    ASSERT_GT(pid_, 0);
  }

  void TearDown() override {
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }

  // Request `op`; false when no answer came in 10 s.
  bool request(Op op) {
    h_->op = op;
    h_->command.ring(++seq_);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    return h_->reply.wait_for(seq_, 0us, 20ms, [&] { return std::chrono::steady_clock::now() < deadline; });
  }

  std::optional<sandbox::SharedPages> pages_;
  Header* h_ = nullptr;
  Seen* seen_ = nullptr;
  pid_t pid_ = -1;
  std::uint32_t seq_ = 1;
};

TEST_F(ServeLoop, IdleWaitsForTheDeviceAndRunsNoCall) {
  h_->flush_caches = 1;
  ASSERT_TRUE(request(Op::ARM));
  EXPECT_EQ(seen_->flushes, 1);
  h_->rc = 42;
  ASSERT_TRUE(request(Op::IDLE));
  EXPECT_EQ(h_->rc, 0);
  EXPECT_EQ(seen_->finishes, 1);
  ASSERT_TRUE(request(Op::PING));
  EXPECT_EQ(h_->rc, 0);  // PING leaves IDLE's answer
  // A CALL before any LOAD has no candidate to call: it fails, and its PING says so.
  ASSERT_TRUE(request(Op::CALL));
  EXPECT_EQ(h_->rc, 1);
  ASSERT_TRUE(request(Op::PING));
  EXPECT_EQ(h_->rc, 1);
  EXPECT_EQ(seen_->finishes, 1);  // no call ran, so nothing was waited for
  h_->op = Op::EXIT;
  h_->command.ring(++seq_);
  int status = 0;
  ASSERT_EQ(::waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace kernelrl::runner
