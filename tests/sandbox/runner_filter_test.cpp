// The runner filter (install_runner_filter): every attack, made by a raw syscall(2) as an attacker
// would, kills the child with SIGSYS (an open that would create or empty a file, and mkdir, fail with
// EACCES instead, the file system unchanged), and the same call made without the filter does what it asks
// (so the filter, not the kernel, stopped it); every honest need of a candidate's process passes
// under the same filter. A page mapped at kImage before the filter stands for the runner's image.
#include "sandbox/syscall_filter.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ipc.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "report_line.hpp"
#include "sandbox/child_process.hpp"
#include "tiny_library.hpp"

namespace kernelrl::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::say;

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kImage = 0x10000000;       // the stand-in image: two pages mapped before the filter
constexpr std::uint64_t kImageEnd = kImage + 2 * kPage;
constexpr std::uint64_t kHighAlias = (1ull << 32) + kPage;  // above kImageEnd, but its low half is below it

enum class Filter { NONE, RUNNER };

bool mapped(long rc) { return rc != -1; }

// Runs `attempt` in a child that maps the stand-in image and, with Filter::RUNNER, installs the runner
// filter first. The child reports "done" (attempt returned true: the call did what it asked) or
// "refused", or dies.
ChildOutcome in_child(const std::function<bool()>& attempt, Filter filter, const fs::path& scratch) {
  fs::create_directories(scratch);
  return run_child_process(
      [&](int fd) {
        const long image = ::syscall(SYS_mmap, kImage, 2 * kPage, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (static_cast<std::uint64_t>(image) != kImage) return say(fd, R"({"result":"no image page"})");
        if (filter == Filter::RUNNER) {
          if (auto installed = install_runner_filter({kImageEnd}); !installed) {
            return say(fd, nlohmann::json{{"result", "no filter: " + installed.error().message}}.dump());
          }
        }
        say(fd, std::string(R"({"result":")") + (attempt() ? "done" : "refused") + "\"}");
      },
      scratch.string(), {}, 20);
}

std::string describe(const ChildOutcome& o) { return o.has_record ? o.record.dump() : describe_end(o); }

class RunnerFilter : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("kernelrl-runner-filter-" + std::to_string(::getpid()));
    fs::create_directories(base_);
  }
  void TearDown() override { fs::remove_all(base_); }

  // The attack kills a filtered child, and an unfiltered one survives it having done what it asked
  // (`control_done`; false where the control uses harmless arguments the kernel refuses).
  void expect_killed(const std::string& what, const std::function<bool()>& attack, bool control_done = true) {
    auto filtered = in_child(attack, Filter::RUNNER, base_ / "scratch");
    EXPECT_EQ(filtered.term_signal, SIGSYS) << what << " under the filter: " << describe(filtered);
    auto control = in_child(attack, Filter::NONE, base_ / "scratch");
    ASSERT_TRUE(control.has_record) << what << " without the filter: " << describe_end(control);
    if (control_done) {
      EXPECT_EQ(control.record["result"], "done") << what << " without the filter";
    }
  }

  fs::path base_;
};

long anonymous_map(int prot) { return ::syscall(SYS_mmap, 0, kPage, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }

TEST_F(RunnerFilter, NoExecutableMemoryThatIsOrWasWritable) {
  expect_killed("anonymous RWX mmap", [] { return mapped(anonymous_map(PROT_READ | PROT_WRITE | PROT_EXEC)); });
  expect_killed("anonymous RX mmap", [] { return mapped(anonymous_map(PROT_READ | PROT_EXEC)); });
  expect_killed("mprotect adding PROT_EXEC", [] {
    const long p = anonymous_map(PROT_READ | PROT_WRITE);
    return mapped(p) && ::syscall(SYS_mprotect, p, kPage, PROT_READ | PROT_EXEC) == 0;
  });
  expect_killed("pkey_mprotect adding PROT_EXEC", [] {
    const long p = anonymous_map(PROT_READ | PROT_WRITE);
    return mapped(p) && ::syscall(SYS_pkey_mprotect, p, kPage, PROT_READ | PROT_EXEC, -1) == 0;
  });
  expect_killed("shared RX mapping of a file", [] {
    const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    return fd >= 0 && mapped(::syscall(SYS_mmap, 0, kPage, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0));
  });
  expect_killed("writable private RX mapping of a file", [] {
    const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    return fd >= 0 && mapped(::syscall(SYS_mmap, 0, kPage, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, fd, 0));
  });
  expect_killed("personality(READ_IMPLIES_EXEC)", [] { return ::syscall(SYS_personality, READ_IMPLIES_EXEC) != -1; });
  expect_killed("memfd_create", [] { return ::syscall(SYS_memfd_create, "code", 0) >= 0; });
}

TEST_F(RunnerFilter, TheImageBelowImageEndIsImmutable) {
  expect_killed("mprotect of the image", [] { return ::syscall(SYS_mprotect, kImage, kPage, PROT_READ) == 0; });
  expect_killed("munmap of the image", [] { return ::syscall(SYS_munmap, kImage + kPage, kPage) == 0; });
  expect_killed("madvise(DONTNEED) of the image", [] { return ::syscall(SYS_madvise, kImage, kPage, MADV_DONTNEED) == 0; });
  expect_killed("mmap MAP_FIXED over the image", [] {
    return ::syscall(SYS_mmap, kImage, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
           static_cast<long>(kImage);
  });
  expect_killed("mremap of the image", [] {
    return mapped(::syscall(SYS_mremap, kImage, kPage, kPage, MREMAP_MAYMOVE | MREMAP_FIXED, kHighAlias));
  });
  expect_killed("mremap onto the image", [] {
    const long p = anonymous_map(PROT_READ | PROT_WRITE);
    return mapped(p) && mapped(::syscall(SYS_mremap, p, kPage, kPage, MREMAP_MAYMOVE | MREMAP_FIXED, kImage));
  });
}

TEST_F(RunnerFilter, NoFileIsCreatedTruncatedOrRemoved) {
  const fs::path created = base_ / "created.txt", shm = fs::path("/dev/shm") / ("kernelrl-runner-" + std::to_string(::getpid()));
  const fs::path victim = base_ / "victim.txt", folder = base_ / "folder";
  auto reset = [&] {
    for (const auto& p : {created, shm, folder, victim}) fs::remove(p);
    std::ofstream(victim) << "kept";  // 4 bytes, the default permissions
  };
  // "refused" only for the filter's EACCES: anything else (success, another error) is "done".
  auto refused_open = [](const fs::path& p, int flags) {
    return [p, flags] { return ::syscall(SYS_openat, AT_FDCWD, p.c_str(), flags | O_CLOEXEC, 0600) >= 0 || errno != EACCES; };
  };
  // An open that could create or empty a file, and mkdir, fail with EACCES (the CUDA driver opens its
  // threads' names with O_CREAT | O_TRUNC and makes its cache folder, and must survive that); every
  // other change kills.
  const bool refused = false, killed = true;
  struct Attack {
    std::string what;
    std::function<bool()> attempt;
    bool kills;
  };
  const std::vector<Attack> attacks{
      {"openat O_CREAT in a folder", refused_open(created, O_WRONLY | O_CREAT), refused},
      {"openat O_CREAT in /dev/shm", refused_open(shm, O_WRONLY | O_CREAT), refused},
      {"open O_CREAT",
       [&] { return ::syscall(SYS_open, created.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600) >= 0 || errno != EACCES; },
       refused},
      {"openat O_TRUNC", refused_open(victim, O_WRONLY | O_TRUNC), refused},
      {"openat O_TMPFILE", refused_open(base_, O_RDWR | O_TMPFILE), refused},
      {"creat", [&] { return ::syscall(SYS_creat, created.c_str(), 0600) >= 0; }, killed},
      {"mkdir", [&] { return ::syscall(SYS_mkdir, folder.c_str(), 0700) == 0 || errno != EACCES; }, refused},
      {"unlink", [&] { return ::syscall(SYS_unlink, victim.c_str()) == 0; }, killed},
      {"rename", [&] { return ::syscall(SYS_rename, victim.c_str(), created.c_str()) == 0; }, killed},
      {"symlink", [&] { return ::syscall(SYS_symlink, victim.c_str(), created.c_str()) == 0; }, killed},
      {"link", [&] { return ::syscall(SYS_link, victim.c_str(), created.c_str()) == 0; }, killed},
      {"truncate", [&] { return ::syscall(SYS_truncate, victim.c_str(), 0) == 0; }, killed},
      {"chmod", [&] { return ::syscall(SYS_chmod, victim.c_str(), 0777) == 0; }, killed},
      {"utimensat", [&] { return ::syscall(SYS_utimensat, AT_FDCWD, victim.c_str(), nullptr, 0) == 0; }, killed},
  };
  for (const auto& [what, attack, kills] : attacks) {
    reset();
    auto filtered = in_child(attack, Filter::RUNNER, base_ / "scratch");
    if (kills) {
      EXPECT_EQ(filtered.term_signal, SIGSYS) << what << ": " << describe(filtered);
    } else {
      EXPECT_EQ(filtered.record.value("result", ""), "refused") << what << ": " << describe(filtered);
    }
    EXPECT_FALSE(fs::exists(created)) << what;
    EXPECT_FALSE(fs::exists(shm)) << what;
    EXPECT_FALSE(fs::exists(folder)) << what;
    EXPECT_EQ(fs::file_size(victim), 4u) << what << " changed the victim file";
    EXPECT_EQ(fs::status(victim).permissions() & fs::perms::others_write, fs::perms::none) << what;
  }
  for (const auto& [what, attack, kills] : attacks) {  // the controls: each really changes the file system
    reset();
    auto control = in_child(attack, Filter::NONE, base_ / "scratch");
    EXPECT_EQ(control.record.value("result", ""), "done") << what << " without the filter: " << describe(control);
  }
  reset();
  fs::remove(shm);
}

TEST_F(RunnerFilter, WhatRootCouldDoToTheMachineIsKilled) {
  // Harmless arguments (queries, or ones the kernel refuses), so a broken filter changes nothing.
  expect_killed("adjtimex", [] {
    timex tx{};  // modes 0: a query
    return ::syscall(SYS_adjtimex, &tx) >= 0;
  });
  expect_killed(
      "clock_settime", [] {
        timespec now{};
        return ::syscall(SYS_clock_settime, CLOCK_MONOTONIC, &now) == 0;  // the monotonic clock cannot be set
      },
      false);
  expect_killed("open_by_handle_at", [] { return ::syscall(SYS_open_by_handle_at, AT_FDCWD, nullptr, O_RDONLY) >= 0; }, false);
  expect_killed("perf_event_open", [] { return ::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0) >= 0; }, false);
  expect_killed("bpf", [] { return ::syscall(SYS_bpf, BPF_PROG_LOAD, nullptr, 0) >= 0; }, false);
  expect_killed("prctl(PR_SET_MM)", [] { return ::syscall(SYS_prctl, PR_SET_MM, 0, 0, 0, 0) == 0; }, false);
  expect_killed("raising a resource limit", [] {
    rlimit same{};
    ::getrlimit(RLIMIT_NOFILE, &same);
    return ::syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &same, nullptr) == 0;  // root could raise the hard limit
  });
  expect_killed("tkill", [] { return ::syscall(SYS_tkill, ::getpid(), 0) == 0; });
  // No sockets at all, local ones included: a local socket reaches a daemon's socket file by path,
  // which Landlock does not cover.
  expect_killed("a local socket", [] { return ::socket(AF_UNIX, SOCK_STREAM, 0) >= 0; });
  expect_killed("a socket pair", [] {
    int fds[2];
    return ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0;
  });
  // Nor System V shared memory or a message queue, which would outlive the process.
  expect_killed("shmget", [] {
    const long id = ::syscall(SYS_shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    return id >= 0 && ::syscall(SYS_shmctl, id, IPC_RMID, nullptr) == 0;  // the control leaves nothing behind
  });
  expect_killed("msgget", [] {
    const long id = ::syscall(SYS_msgget, IPC_PRIVATE, IPC_CREAT | 0600);
    return id >= 0 && ::syscall(SYS_msgctl, id, IPC_RMID, nullptr) == 0;
  });
  expect_killed("setuid", [] { return ::syscall(SYS_setuid, ::getuid()) == 0; });
}

TEST_F(RunnerFilter, WhatTheCandidateProfileKillsIsKilled) {
  expect_killed("fork", [] {
    const long pid = ::syscall(SYS_fork);
    if (pid == 0) ::_exit(0);  // the control's new process leaves at once
    return pid > 0;
  });
  expect_killed("a network socket", [] { return ::syscall(SYS_socket, AF_INET, SOCK_STREAM, 0) >= 0; });
  expect_killed("a signal to the parent", [] { return ::syscall(SYS_kill, ::getppid(), 0) == 0; });
}

// One child does everything a candidate's process honestly needs, under the same filter; the first
// step that fails is named.
TEST_F(RunnerFilter, HonestNeedsPass) {
  const std::string library = testing::build_tiny_library(base_ / "lib");
  const fs::path readable = base_ / "readable.txt";
  std::ofstream(readable) << "data";
  std::vector<std::pair<std::string, std::function<bool()>>> steps{
      {"std::thread and join",
       [] {
         std::atomic<int> x{0};
         std::thread t([&] { x = 42; });
         t.join();
         return x == 42;
       }},
      {"malloc of 256 MB",
       [] {
         auto* p = static_cast<char*>(std::malloc(256u << 20));
         if (p == nullptr) return false;
         std::memset(p, 1, 256u << 20);
         std::free(p);
         return true;
       }},
      {"mmap RW anonymous, mprotect RW->R->RW, munmap",
       [] {
         const long p = anonymous_map(PROT_READ | PROT_WRITE);
         return mapped(p) && ::syscall(SYS_mprotect, p, kPage, PROT_READ) == 0 &&
                ::syscall(SYS_mprotect, p, kPage, PROT_READ | PROT_WRITE) == 0 && ::syscall(SYS_munmap, p, kPage) == 0;
       }},
      {"mmap MAP_FIXED above image_end",
       [] {
         const long reserved = ::syscall(SYS_mmap, 0, 4 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
         return mapped(reserved) &&
                ::syscall(SYS_mmap, reserved + kPage, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
                    reserved + static_cast<long>(kPage) &&
                ::syscall(SYS_munmap, reserved, 4 * kPage) == 0;
       }},
      {"mmap, madvise, munmap at an address whose low half is below image_end (a full 64-bit compare)",
       [] {
         return ::syscall(SYS_mmap, kHighAlias, kPage, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == static_cast<long>(kHighAlias) &&
                ::syscall(SYS_madvise, kHighAlias, kPage, MADV_DONTNEED) == 0 && ::syscall(SYS_munmap, kHighAlias, kPage) == 0;
       }},
      {"futex", [] {
         int word = 0;
         return ::syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0) >= 0;
       }},
      {"clock_gettime", [] {
         timespec t{};
         return ::clock_gettime(CLOCK_MONOTONIC, &t) == 0;
       }},
      {"read-only open of a file", [&] {
         const int fd = ::open(readable.c_str(), O_RDONLY | O_CLOEXEC);
         char c = 0;
         return fd >= 0 && ::read(fd, &c, 1) == 1 && ::close(fd) == 0;
       }},
      {"listing a folder (O_DIRECTORY)", [&] {
         const fs::path folder = readable.parent_path();
         const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
         return fd >= 0 && ::close(fd) == 0 && fs::exists(folder / "readable.txt");
       }},
      {"naming a thread through its comm file with fopen \"wb\" (O_CREAT | O_TRUNC), as the CUDA driver does",
       [] {
         const std::string comm = "/proc/self/task/" + std::to_string(::gettid()) + "/comm";
         FILE* f = std::fopen(comm.c_str(), "wb");  // refused (EACCES), not killed
         return f == nullptr ? errno == EACCES : std::fclose(f) == 0;
       }},
      {"O_RDWR open of /dev/null", [] {
         const int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
         return fd >= 0 && ::write(fd, "x", 1) == 1 && ::close(fd) == 0;
       }},
      {"personality query, getrlimit, PR_SET_NAME, a signal to itself", [] {
         rlimit r{};
         return ::personality(0xffffffff) != -1 && ::getrlimit(RLIMIT_NOFILE, &r) == 0 &&
                ::prctl(PR_SET_NAME, "honest", 0, 0, 0) == 0 && ::kill(::getpid(), 0) == 0;
       }},
  };
  if (!library.empty()) {
    steps.push_back({"dlopen of a fresh library, and calling it", [&] {
                       void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
                       if (handle == nullptr) return false;
                       auto* plus_one = reinterpret_cast<int (*)(int)>(::dlsym(handle, testing::kTinySymbol));
                       return plus_one != nullptr && plus_one(41) == 42;
                     }});
  }
  auto o = in_child(
      [&] {
        for (const auto& [what, step] : steps) {
          if (!step()) {
            std::fprintf(stderr, "honest step failed: %s\n", what.c_str());
            return false;
          }
        }
        return true;
      },
      Filter::RUNNER, base_ / "scratch");
  EXPECT_EQ(o.record.value("result", ""), "done") << describe(o) << "\n" << o.stderr_tail;
  if (library.empty()) GTEST_SKIP() << "SKIPPED the dlopen step: no C compiler (cc) to build a library";
}

}  // namespace
}  // namespace kernelrl::sandbox
