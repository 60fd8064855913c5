// kernelrl-gpu-runner (runner/device_runner.hpp) started the way the evaluating child starts it,
// on any machine: misuse is refused with a usage message, and a runner that cannot set up its
// device (no GPU here, or an arena handle that is not one) says why through the protocol's pages
// and ends, instead of hanging or loading the candidate. The GPU path itself is in
// tests/eval/engine_gpu_test.cpp (NativeCandidateProcessGpuTest).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "kernelrl/build_config.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::runner {
namespace {

using namespace std::chrono_literals;

// Starts the runner with the pages at descriptor 3 and `args` after the program name; returns its pid.
pid_t start(int pages_fd, const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pages_fd, 3);
    ::fcntl(3, F_SETFD, 0);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 2);
    std::vector<char*> argv{const_cast<char*>("kernelrl-gpu-runner")};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(build::gpu_runner_tool, argv.data());
    _exit(127);
  }
  return pid;
}

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(GpuRunner, MisuseIsAUsageError) {
  auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset);
  ASSERT_TRUE(pages) << pages.error().message;
  EXPECT_EQ(exit_code(start(pages->fd(), {"3"})), 64);
  // Not started by the process it names as its parent.
  EXPECT_EQ(exit_code(start(pages->fd(), {"3", std::to_string(kDataOffset), "1", "/nonexistent.so"})), 64);
  // Pages smaller than the header.
  EXPECT_EQ(exit_code(start(pages->fd(), {"3", "16", std::to_string(::getpid()), "/nonexistent.so"})), 64);
}

TEST(GpuRunner, ADeviceItCannotSetUpIsReportedThroughThePages) {
  auto pages = sandbox::SharedPages::create_in_memory_file(kDataOffset);
  ASSERT_TRUE(pages) << pages.error().message;
  auto* h = new (pages->data()) Header{};
  h->device = 0;
  h->arena_bytes = 1 << 20;  // the IPC handle stays zeros: no allocation of any process
  const pid_t pid = start(pages->fd(), {"3", std::to_string(kDataOffset), std::to_string(::getpid()), "/nonexistent.so"});
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  ASSERT_TRUE(h->reply.wait_for(1, 0us, 20ms, [&] { return std::chrono::steady_clock::now() < deadline; }))
      << "no answer from the runner in 60 s";
  EXPECT_EQ(h->rc, -1);
  const std::string text = read_text(h);
  EXPECT_TRUE(text.find("cudaSetDevice") != std::string::npos || text.find("cudaIpcOpenMemHandle") != std::string::npos)
      << text;
  EXPECT_EQ(exit_code(pid), 1);
}

}  // namespace
}  // namespace kernelrl::runner
