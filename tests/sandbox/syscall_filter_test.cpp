// The candidate filter: threads and ordinary work pass; a new process, an exec, a network socket
// or ptrace kills the child with SIGSYS. The build filter: processes pass, the rest as before.
#include "sandbox/syscall_filter.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "sandbox/child_process.hpp"
#include "report_line.hpp"

namespace kernelrl::sandbox {
namespace {

using testing::say;

// Runs `attempt` in a filtered child; returns the outcome.
ChildOutcome filtered(const std::function<void()>& attempt, FilterProfile profile = FilterProfile::Candidate) {
  auto dir = std::filesystem::temp_directory_path() / ("kernelrl-filter-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto o = run_child_process(
      [&](int fd) {
        if (!install_syscall_filter(profile)) return;
        attempt();
        say(fd, R"({"result":"survived"})");
      },
      dir.string(), {}, 10);
  std::filesystem::remove_all(dir);
  return o;
}

TEST(SyscallFilter, ThreadsAndLocalSocketsPass) {
  auto o = filtered([] {
    int x = 0;
    std::thread t([&] { x = 42; });
    t.join();
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (x != 42 || s < 0) ::abort();
  });
  EXPECT_TRUE(o.has_record) << describe_end(o);
}

TEST(SyscallFilter, ForkIsKilled) {
  auto o = filtered([] { ::fork(); });
  EXPECT_FALSE(o.has_record);
  EXPECT_EQ(o.term_signal, SIGSYS);
}

TEST(SyscallFilter, ExecIsKilled) {
  auto o = filtered([] { ::execl("/bin/true", "true", static_cast<char*>(nullptr)); });
  EXPECT_EQ(o.term_signal, SIGSYS);
}

TEST(SyscallFilter, NetworkSocketsAreKilled) {
  auto o4 = filtered([] { ::socket(AF_INET, SOCK_STREAM, 0); });
  EXPECT_EQ(o4.term_signal, SIGSYS);
  auto o6 = filtered([] { ::socket(AF_INET6, SOCK_DGRAM, 0); });
  EXPECT_EQ(o6.term_signal, SIGSYS);
}

// The Build profile (the kernelbench prebuild, which starts compilers): processes and exec pass,
// the network and tracing still kill, in the processes it starts too.
TEST(SyscallFilter, BuildProfileAllowsProcessesButNoNetwork) {
  auto builds = filtered(
      [] {
        if (std::system("/bin/true") != 0) ::abort();
        if (std::system("/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_UNIX)\"") != 0) ::abort();
      },
      FilterProfile::Build);
  EXPECT_TRUE(builds.has_record) << describe_end(builds);
  EXPECT_EQ(filtered([] { ::socket(AF_INET, SOCK_STREAM, 0); }, FilterProfile::Build).term_signal, SIGSYS);
  EXPECT_EQ(filtered([] { ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }, FilterProfile::Build).term_signal, SIGSYS);
  auto child_connects = filtered(
      [] {  // a started process inherits the filter: its socket kills it, and system() reports that
        const int status = std::system("/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_INET)\"");
        const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
        const bool shell_says_killed = WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS;
        if (!killed && !shell_says_killed) ::abort();
      },
      FilterProfile::Build);
  EXPECT_TRUE(child_connects.has_record) << describe_end(child_connects);
}

TEST(SyscallFilter, SystemAndPtraceAreKilled) {
  EXPECT_EQ(filtered([] { (void)!std::system("echo hi"); }).term_signal, SIGSYS);
  EXPECT_EQ(filtered([] { ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }).term_signal, SIGSYS);
}

TEST(SyscallFilter, SignalsToItselfPassSignalsToOthersAreKilled) {
  auto self = filtered([] {
    ::signal(SIGUSR1, SIG_IGN);
    ::kill(::getpid(), SIGUSR1);
    ::raise(SIGUSR1);
  });
  EXPECT_TRUE(self.has_record) << describe_end(self);
  auto parent = filtered([] { ::kill(::getppid(), 0); });  // even a harmless probe of the worker
  EXPECT_EQ(parent.term_signal, SIGSYS);
  auto everyone = filtered([] { ::kill(-1, 0); });
  EXPECT_EQ(everyone.term_signal, SIGSYS);
}

}  // namespace
}  // namespace kernelrl::sandbox
