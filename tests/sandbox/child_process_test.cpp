// Child-process containment: whatever the child does (crash, abort, hang, exit early, spawn
// descendants), the parent gets an outcome and nothing is left running.
#include "sandbox/child_process.hpp"

#include "../common/process_state.hpp"
#include "report_line.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kernelrl::sandbox {
namespace {

using testing::say;

// Still running or sleeping after a second; a zombie (killed, not yet reaped by init) counts as gone.
bool alive(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (!kernelrl::testing::process_running(pid)) return false;
    ::usleep(10000);
  }
  return true;
}

class ChildProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kernelrl-child-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ChildProcessTest, RecordComesBack) {
  auto o = run_child_process([](int fd) { say(fd, R"({"phase":"load"})"); say(fd, R"({"result":{"x":1}})"); },
                             dir_.string(), {}, 10);
  ASSERT_TRUE(o.has_record);
  EXPECT_EQ(o.record["result"]["x"], 1);
  EXPECT_EQ(o.last_phase, "load");
  EXPECT_FALSE(o.timed_out);
}

TEST_F(ChildProcessTest, SegfaultIsReportedWithSignalName) {
  auto o = run_child_process([](int fd) { say(fd, R"({"phase":"correctness"})"); ::raise(SIGSEGV); }, dir_.string(), {}, 10);
  EXPECT_FALSE(o.has_record);
  EXPECT_EQ(o.term_signal, SIGSEGV);
  EXPECT_EQ(o.last_phase, "correctness");
  EXPECT_NE(describe_end(o).find("SIGSEGV"), std::string::npos) << describe_end(o);
}

TEST_F(ChildProcessTest, AbortIsReported) {
  auto o = run_child_process([](int) { std::abort(); }, dir_.string(), {}, 10);
  EXPECT_EQ(o.term_signal, SIGABRT);
}

TEST_F(ChildProcessTest, HangInAPhaseTimesOutWithThatPhasesLimit) {
  auto t0 = std::chrono::steady_clock::now();
  auto o = run_child_process(
      [](int fd) {
        say(fd, R"({"phase":"correctness"})");
        for (;;) ::pause();
      },
      dir_.string(), {{"correctness", 0.5}}, 30);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.last_phase, "correctness");
  EXPECT_DOUBLE_EQ(o.phase_limit_s, 0.5);
  EXPECT_LT(s, 5.0);
}

// A phase line may set the limits of its own and later phases (the evaluating child's scaled
// limits, eval/time_limits.hpp); only the first line carrying them counts, so what runs after it
// (candidate code) cannot lengthen its own limit by announcing new ones.
TEST_F(ChildProcessTest, APhaseLineSetsTheLimitsOfLaterPhasesOnce) {
  const std::vector<std::vector<std::string>> announcements = {
      {R"({"phase":"load","limits_s":{"correctness":0.5,"timing":"long"}})", R"({"phase":"correctness"})"},
      {R"({"phase":"load","limits_s":{"correctness":0.5}})", R"({"phase":"correctness","limits_s":{"correctness":60}})"},
  };
  for (const auto& lines : announcements) {
    auto t0 = std::chrono::steady_clock::now();
    auto o = run_child_process(
        [&](int fd) {
          for (const auto& line : lines) say(fd, line);
          for (;;) ::pause();
        },
        dir_.string(), {{"correctness", 30}}, 30);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(o.timed_out) << lines.back();
    EXPECT_EQ(o.last_phase, "correctness");
    EXPECT_DOUBLE_EQ(o.phase_limit_s, 0.5) << lines.back();
    EXPECT_LT(s, 5.0);
  }
}

TEST_F(ChildProcessTest, EarlyExitWithoutRecordIsNotSuccess) {
  auto o = run_child_process([](int) { _exit(0); }, dir_.string(), {}, 10);
  EXPECT_FALSE(o.has_record);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(describe_end(o).find("before reporting"), std::string::npos);
}

TEST_F(ChildProcessTest, OutputIsCapturedAndDescendantsAreKilled) {
  auto pid_file = dir_ / "grandchild.pid";
  auto o = run_child_process(
      [&](int fd) {
        if (pid_t g = ::fork(); g == 0) {
          for (;;) ::pause();  // a descendant that would outlive its parent
        } else {
          FILE* f = std::fopen(pid_file.c_str(), "w");
          std::fprintf(f, "%d", g);
          std::fclose(f);
        }
        std::fprintf(stderr, "hello from the child\n");
        std::fflush(stderr);
        say(fd, R"({"result":{}})");
      },
      dir_.string(), {}, 10);
  EXPECT_TRUE(o.has_record);
  EXPECT_NE(o.stderr_tail.find("hello from the child"), std::string::npos);
  FILE* f = std::fopen(pid_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int g = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &g), 1);
  std::fclose(f);
  EXPECT_FALSE(alive(g)) << "descendant " << g << " still running";
}

TEST_F(ChildProcessTest, RunawayOutputIsStoppedNotStored) {
  auto o = run_child_process(
      [](int fd) {
        say(fd, R"({"phase":"correctness"})");
        std::string line(1 << 20, 'x');
        for (;;) std::fwrite(line.data(), 1, line.size(), stdout);
      },
      dir_.string(), {}, 30);
  EXPECT_FALSE(o.has_record);
  EXPECT_EQ(o.term_signal, SIGXFSZ);
  EXPECT_LE(o.stderr_tail.size(), 4000u);
}

TEST_F(ChildProcessTest, ChildInheritsNoOtherDescriptor) {
  int other[2];
  ASSERT_EQ(::pipe(other), 0);  // stands for another child's report pipe in the worker
  const int probe = ::fcntl(other[0], F_DUPFD, 100);  // above the child's own 0-4
  auto o = run_child_process(
      [probe](int fd) { say(fd, ::fcntl(probe, F_GETFD) < 0 ? R"({"closed":true})" : R"({"closed":false})"); },
      dir_.string(), {}, 10);
  ::close(probe);
  ::close(other[0]);
  ::close(other[1]);
  ASSERT_TRUE(o.has_record);
  EXPECT_TRUE(o.record["closed"].get<bool>());
}

// The report channel is written through its descriptor only: reopening it by path (what a library
// function taking a file name would do with "/proc/self/fd/3") fails, as Landlock cannot stop it.
TEST_F(ChildProcessTest, TheReportChannelCannotBeReopenedByPath) {
  auto o = run_child_process(
      [](int fd) {
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        const int reopened = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        const int err = errno;
        if (reopened >= 0) {
          say(reopened, R"({"forged":true})");
          return;
        }
        say(fd, err == ENXIO ? R"({"refused":"ENXIO"})" : R"({"refused":"other"})");
      },
      dir_.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  EXPECT_FALSE(o.record.contains("forged"));
  EXPECT_EQ(o.record.value("refused", ""), "ENXIO");
}

TEST_F(ChildProcessTest, EachPhaseIsGrantedAfterTheHookRan) {
  std::vector<std::string> hooked;
  ChildHandle h = spawn_child(
      [](int report_fd, int request_fd) {
        for (const char* phase : {"setup", "timing"}) {
          say(report_fd, std::string(R"({"phase":")") + phase + "\"}");
          if (!wait_for_grant(request_fd)) _exit(3);
        }
        say(report_fd, R"({"result":{"granted":2}})");
      },
      dir_.string());
  auto o = watch_child(h, {}, 10, [&](const std::string& phase) { hooked.push_back(phase); });
  ASSERT_TRUE(o.has_record) << describe_end(o);
  EXPECT_EQ(o.record["result"]["granted"], 2);
  EXPECT_EQ(hooked, (std::vector<std::string>{"setup", "timing"}));
}

// A killed child's own child (a host candidate's runner) comes to a subreaper and is reaped
// there, not left as a zombie for init to collect.
TEST_F(ChildProcessTest, AKilledChildsChildIsReapedByTheSubreaper) {
  ASSERT_TRUE(become_subreaper());
  auto pid_file = dir_ / "runner.pid";
  auto o = run_child_process(
      [&](int fd) {
        if (pid_t g = ::fork(); g == 0) {
          for (;;) ::pause();
        } else {
          FILE* f = std::fopen(pid_file.c_str(), "w");
          std::fprintf(f, "%d", g);
          std::fclose(f);
        }
        say(fd, R"({"result":{}})");
      },
      dir_.string(), {}, 10);
  ASSERT_TRUE(o.has_record);
  FILE* f = std::fopen(pid_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int g = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &g), 1);
  std::fclose(f);
  // Killed with its parent's group, it is a zombie whose parent is now this process, not init.
  bool ours = false;
  for (int i = 0; i < 200 && !ours; ++i) {
    const auto p = kernelrl::testing::read_process_state(g);
    ours = p && p->state == 'Z' && p->ppid == ::getpid();
    if (!ours) ::usleep(10000);
  }
  EXPECT_TRUE(ours) << "grandchild " << g << " did not come to this process";
  bool reaped = false;
  for (int i = 0; i < 200 && !reaped; ++i) {
    reap_children(false);
    reaped = ::kill(g, 0) != 0 && errno == ESRCH;
    if (!reaped) ::usleep(10000);
  }
  EXPECT_TRUE(reaped) << "grandchild " << g << " is still in the process table";
  reap_children(true);
}

TEST_F(ChildProcessTest, ChildrenThatReportedAreReapedLater) {
  for (int i = 0; i < 5; ++i) {
    auto o = run_child_process([](int fd) { say(fd, R"({"result":{}})"); }, dir_.string(), {}, 10);
    ASSERT_TRUE(o.has_record);
  }
  EXPECT_LE(n_unreaped_children(), 5u);
  reap_children(true);
  EXPECT_EQ(n_unreaped_children(), 0u);
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);  // no child of ours is left, zombie or not
}

// A child that reported but whose group lingers (a runner tearing down a large CUDA context) is
// waited for until the group is gone, within the limit, and reaped.
TEST_F(ChildProcessTest, AReportedChildsGroupIsWaitedForUntilItEnds) {
  const auto lingering_group = [](int ms) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      if (::fork() == 0) ::usleep(static_cast<useconds_t>(ms) * 1000);  // a member of the group
      ::usleep(static_cast<useconds_t>(ms) * 1000);
      _exit(0);
    }
    ::setpgid(pid, pid);
    return pid;
  };
  const pid_t quick = lingering_group(200);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_for_group_end(quick, std::chrono::milliseconds(10000)));
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited_ms, 150);
  EXPECT_LT(waited_ms, 5000);
  EXPECT_FALSE(alive(quick));

  const pid_t slow = lingering_group(3000);
  EXPECT_FALSE(wait_for_group_end(slow, std::chrono::milliseconds(100)));  // the limit comes first
  ::kill(-slow, SIGKILL);
  EXPECT_TRUE(wait_for_group_end(slow, std::chrono::milliseconds(10000)));
  reap_children(true);
}

TEST_F(ChildProcessTest, AnOrphanedWatcherKillsItsChildAndReturns) {
  // middle (the worker's parent) -> watcher (the worker) -> child (a candidate that never ends).
  auto pid_file = dir_ / "child.pid";
  int outcome[2];
  ASSERT_EQ(::pipe(outcome), 0);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    if (::fork() == 0) {
      end_watched_children_when_orphaned(::getppid());
      auto o = run_child_process(
          [&](int) {
            FILE* f = std::fopen(pid_file.c_str(), "w");
            std::fprintf(f, "%d", ::getpid());
            std::fclose(f);
            for (;;) ::pause();
          },
          dir_.string(), {}, 120);
      std::string line = std::to_string(o.orphaned ? 1 : 0) + " " + std::to_string(o.wall_ms) + "\n";
      (void)!::write(outcome[1], line.data(), line.size());
      ::_exit(0);
    }
    for (;;) ::pause();
  }
  ::close(outcome[1]);
  int child = 0;
  for (int i = 0; i < 500 && child == 0; ++i) {
    if (FILE* f = std::fopen(pid_file.c_str(), "r")) {
      if (std::fscanf(f, "%d", &child) != 1) child = 0;
      std::fclose(f);
    }
    if (child == 0) ::usleep(10000);
  }
  ASSERT_GT(child, 0) << "the watched child never started";
  ::kill(middle, SIGKILL);
  ::waitpid(middle, nullptr, 0);
  pollfd p{outcome[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1) << "the orphaned watcher did not return within 10 s";
  char buf[64] = {};
  ASSERT_GT(::read(outcome[0], buf, sizeof buf - 1), 0);
  ::close(outcome[0]);
  int orphaned = 0;
  double wall_ms = 0;
  ASSERT_EQ(std::sscanf(buf, "%d %lf", &orphaned, &wall_ms), 2) << buf;
  EXPECT_EQ(orphaned, 1);
  EXPECT_LT(wall_ms, 10000);
  EXPECT_FALSE(alive(child)) << "the watched child " << child << " outlived its orphaned watcher";
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace
}  // namespace kernelrl::sandbox
