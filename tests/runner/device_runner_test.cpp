// The native GPU runner (runner/device_runner.hpp) forked and started the way the evaluating child
// does it (eval/runner_ahead.hpp), on any machine: it waits for START, and a runner that cannot get
// its device ready (no GPU here, or an arena handle that is not one) says why through the protocol's
// pages and ends, instead of hanging or loading the candidate; one whose parent is gone ends too.
// The GPU path itself is in tests/eval/engine_gpu_test.cpp (NativeCandidateProcessGpuTest).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "runner/device_runner.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::runner {
namespace {

using namespace std::chrono_literals;

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Forks the runner as the child does, with its stderr silenced; returns its pid.
pid_t fork_runner(sandbox::SharedPages& pages) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    serve_device_runner(std::move(pages), parent);
  }
  return pid;
}

bool answered(const Header* h) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  return h->reply.wait_for(1, 0us, 20ms, [&] { return std::chrono::steady_clock::now() < deadline; });
}

// A runner forked over fresh pages, as the child forks it at its start.
class DeviceRunner : public testing::Test {
 protected:
  void SetUp() override {
    auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset);
    ASSERT_TRUE(pages) << pages.error().message;
    pages_.emplace(std::move(*pages));
    h_ = new (pages_->data()) Header{};
    pid_ = fork_runner(*pages_);
    ASSERT_GT(pid_, 0);
  }

  // Request 1: `op` with `text`.
  void send(Op op, const std::string& text) {
    write_text(h_, text);
    h_->op = op;
    h_->command.ring(1);
  }

  std::optional<sandbox::SharedPages> pages_;
  Header* h_ = nullptr;
  pid_t pid_ = -1;
};

TEST_F(DeviceRunner, ADeviceItCannotSetUpIsReportedAfterStart) {
  // Nothing is said before START: the runner only gets ready.
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(h_->reply.value.load(), 0u);
  h_->device = 0;
  h_->arena_bytes = 1 << 20;  // the IPC handle stays zeros: no allocation of any process
  send(Op::START, R"({"artifact": "/nonexistent.so"})");
  ASSERT_TRUE(answered(h_)) << "no answer from the runner in 60 s";
  EXPECT_EQ(h_->rc, -1);
  const std::string text = read_text(h_);
  EXPECT_TRUE(text.find("CUDA context") != std::string::npos || text.find("cudaSetDevice") != std::string::npos ||
              text.find("cudaIpcOpenMemHandle") != std::string::npos)
      << text;
  EXPECT_EQ(exit_code(pid_), 1);
}

TEST_F(DeviceRunner, AStartWithoutAnArtifactIsRefused) {
  send(Op::START, "{}");
  ASSERT_TRUE(answered(h_)) << "no answer from the runner in 60 s";
  EXPECT_EQ(h_->rc, -1);
  EXPECT_EQ(read_text(h_), "START: no artifact");
  EXPECT_EQ(exit_code(pid_), 1);
}

TEST_F(DeviceRunner, AnotherFirstRequestEndsIt) {
  send(Op::LOAD, "");  // a candidate's load before the runner was handed its evaluation
  EXPECT_EQ(exit_code(pid_), 1);
  EXPECT_EQ(h_->reply.value.load(), 0u);
}

}  // namespace
}  // namespace kernelrl::runner
