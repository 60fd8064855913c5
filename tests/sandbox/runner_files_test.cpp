// File confinement of a candidate's process (confine_files): after it, reading only below the
// readable roots, writing only the given device files, creating nothing anywhere, no /dev/shm, no
// /proc/self/mem (which writes past page protections); the same accesses without it succeed. With the
// runner filter on top, a candidate's honest work still passes (dlopen of its library below a root).
#include "sandbox/confinement.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "report_line.hpp"
#include "sandbox/child_process.hpp"
#include "sandbox/syscall_filter.hpp"
#include "tiny_library.hpp"

namespace kernelrl::sandbox {
namespace {

namespace fs = std::filesystem;
using testing::say;

// What the loader and the C library read; the candidate's folder is added per test.
const std::vector<std::string> kSystemRoots = {"/usr", "/lib", "/lib64", "/etc/ld.so.cache"};

// 0 when `open` succeeds, else its errno.
int open_errno(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

// 0 when a connection to the abstract Unix socket `name` succeeds, else its errno.
int connect_errno(const std::string& name) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const int rc = ::connect(s, reinterpret_cast<sockaddr*>(&addr), len);
  const int saved = errno;
  ::close(s);
  return rc == 0 ? 0 : saved;
}

class RunnerFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("kernelrl-runner-files-" + std::to_string(::getpid()));
    readable_ = base_ / "candidate";
    fs::create_directories(readable_);
    fs::create_directories(base_ / "outside");
    std::ofstream(readable_ / "a.txt") << "a";
    std::ofstream(base_ / "outside" / "b.txt") << "b";
    shm_ = fs::path("/dev/shm") / ("kernelrl-runner-files-" + std::to_string(::getpid()));
    // An abstract socket outside the child's layer: the worker's, say.
    socket_name_ = "kernelrl-runner-files-" + std::to_string(::getpid());
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, socket_name_.data(), socket_name_.size());
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + socket_name_.size());
    listening_ = ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(listener_, 8) == 0;
  }
  void TearDown() override {
    ::close(listener_);
    fs::remove(shm_);
    fs::remove_all(base_);
  }

  // Every access the tests look at, from a child confined (or not) as a candidate's process is.
  nlohmann::json accesses(bool confine) {
    auto o = run_child_process(
        [&](int fd) {
          nlohmann::json r;
          if (confine) {
            std::vector<std::string> roots = kSystemRoots;
            roots.push_back(readable_.string());
            const CandidateDeviceFiles devices = device_files_for_candidates(false);
            roots.insert(roots.end(), devices.readable.begin(), devices.readable.end());
            auto confined = confine_files(roots, devices.writable);
            if (!confined) return say(fd, nlohmann::json{{"result", {{"error", confined.error().message}}}}.dump());
          }
          r["passwd"] = open_errno("/etc/passwd", O_RDONLY);
          r["outside"] = open_errno(base_ / "outside" / "b.txt", O_RDONLY);
          r["inside"] = open_errno(readable_ / "a.txt", O_RDONLY);
          r["inside_write"] = open_errno(readable_ / "a.txt", O_WRONLY);
          r["create_inside"] = open_errno(readable_ / "new.txt", O_WRONLY | O_CREAT);
          r["dev_null_write"] = open_errno("/dev/null", O_WRONLY);
          r["dev_urandom"] = open_errno("/dev/urandom", O_RDONLY);
          r["dev_shm_list"] = open_errno("/dev/shm", O_RDONLY | O_DIRECTORY);
          r["dev_shm_create"] = open_errno(shm_, O_WRONLY | O_CREAT);
          r["proc_self_mem"] = open_errno("/proc/self/mem", O_RDWR);
          r["rename"] = std::rename((readable_ / "a.txt").c_str(), (readable_ / "c.txt").c_str()) == 0 ? 0 : errno;
          r["abstract_socket"] = listening_ ? connect_errno(socket_name_) : -1;
          say(fd, nlohmann::json{{"result", r}}.dump());
        },
        readable_.string(), {}, 10);
    EXPECT_TRUE(o.has_record) << describe_end(o);
    return o.has_record ? o.record["result"] : nlohmann::json::object();
  }

  fs::path base_, readable_, shm_;
  std::string socket_name_;
  int listener_ = -1;
  bool listening_ = false;
};

TEST_F(RunnerFiles, OnlyTheRootsAreReadableAndOnlyTheDeviceFilesWritable) {
  const nlohmann::json r = accesses(true);
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["passwd"], EACCES);
  EXPECT_EQ(r["outside"], EACCES);
  EXPECT_EQ(r["inside"], 0);
  EXPECT_EQ(r["inside_write"], EACCES);
  EXPECT_EQ(r["create_inside"], EACCES);
  EXPECT_FALSE(fs::exists(readable_ / "new.txt"));
  EXPECT_EQ(r["dev_null_write"], 0);
  EXPECT_EQ(r["dev_urandom"], 0);
  EXPECT_EQ(r["dev_shm_list"], EACCES);
  EXPECT_EQ(r["dev_shm_create"], EACCES);
  EXPECT_FALSE(fs::exists(shm_));
  EXPECT_EQ(r["proc_self_mem"], EACCES);
  EXPECT_NE(r["rename"], 0);
  EXPECT_TRUE(fs::exists(readable_ / "a.txt"));
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
  if (abi >= 6 && listening_) {
    EXPECT_EQ(r["abstract_socket"], EPERM) << "Landlock ABI " << abi << " scopes abstract Unix sockets";
  } else {
    std::printf("NOTE: Landlock ABI %ld: abstract Unix sockets not scoped, not checked\n", abi);
  }
}

// The control: every access above succeeds without the confinement, so the test can fail.
TEST_F(RunnerFiles, WithoutItEveryAccessSucceeds) {
  const nlohmann::json r = accesses(false);
  for (const char* key : {"passwd", "outside", "inside", "inside_write", "create_inside", "dev_null_write",
                          "dev_shm_list", "dev_shm_create", "proc_self_mem", "rename"}) {
    EXPECT_EQ(r[key], 0) << key;
  }
  if (listening_) {
    EXPECT_EQ(r["abstract_socket"], 0);
  }
}

TEST_F(RunnerFiles, AProcessWithThreadsIsRefused) {
  auto o = run_child_process(
      [&](int fd) {
        std::thread sleeper([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
        auto confined = confine_files(kSystemRoots, {"/dev/null"});
        sleeper.join();
        say(fd, nlohmann::json{{"result", confined ? "confined" : confined.error().message}}.dump());
      },
      readable_.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  EXPECT_NE(o.record["result"].get<std::string>().find("2 threads"), std::string::npos) << o.record.dump();
}

TEST_F(RunnerFiles, AFolderIsNoWritableFile) {
  auto o = run_child_process(
      [&](int fd) {
        auto confined = confine_files(kSystemRoots, {"/dev/null", base_.string()});
        say(fd, nlohmann::json{{"result", confined ? "confined" : confined.error().message}}.dump());
      },
      readable_.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o);
  EXPECT_NE(o.record["result"].get<std::string>().find("is a folder"), std::string::npos) << o.record.dump();
}

TEST(CandidateDeviceFiles, SingleDeviceFilesNeverSharedMemory) {
  for (bool cuda : {false, true}) {
    const CandidateDeviceFiles files = device_files_for_candidates(cuda);
    EXPECT_EQ(files.writable.front(), "/dev/null");
    for (const auto& f : files.readable) {
      EXPECT_EQ(f.rfind("/dev/", 0), 0u) << f;
      EXPECT_EQ(f.find("/dev/shm"), std::string::npos) << f;
      EXPECT_FALSE(fs::is_directory(f)) << f;
    }
    for (const auto& f : files.writable) {
      EXPECT_TRUE(f == "/dev/null" || f.rfind("/dev/nvidia", 0) == 0) << f;
      EXPECT_NE(std::find(files.readable.begin(), files.readable.end(), f), files.readable.end()) << f << " unreadable";
    }
    if (!cuda) {
      EXPECT_EQ(files.writable, std::vector<std::string>{"/dev/null"});
    }
  }
}

// Both layers as the runner sets them: a candidate's library below a readable root still loads and
// runs, threads start, /dev/null is written.
TEST_F(RunnerFiles, HonestWorkPassesUnderBothLayers) {
  const std::string library = testing::build_tiny_library(readable_ / "build");
  if (library.empty()) GTEST_SKIP() << "SKIPPED: no C compiler (cc) to build a library";
  auto o = run_child_process(
      [&](int fd) {
        std::vector<std::string> roots = kSystemRoots;
        roots.push_back(readable_.string());
        const CandidateDeviceFiles devices = device_files_for_candidates(false);
        roots.insert(roots.end(), devices.readable.begin(), devices.readable.end());
        if (auto s = confine_files(roots, devices.writable); !s) return say(fd, nlohmann::json{{"result", s.error().message}}.dump());
        if (auto s = install_runner_filter({}); !s) return say(fd, nlohmann::json{{"result", s.error().message}}.dump());
        void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
        auto* plus_one = handle ? reinterpret_cast<int (*)(int)>(::dlsym(handle, testing::kTinySymbol)) : nullptr;
        int from_thread = 0;
        std::thread t([&] { from_thread = plus_one ? plus_one(1) : 0; });
        t.join();
        const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        const bool wrote = null_fd >= 0 && ::write(null_fd, "x", 1) == 1;
        say(fd, nlohmann::json{{"result", handle == nullptr ? std::string("dlopen: ") + ::dlerror()
                                          : (from_thread == 2 && wrote) ? "ok" : "wrong"}}.dump());
      },
      readable_.string(), {}, 10);
  ASSERT_TRUE(o.has_record) << describe_end(o) << "\n" << o.stderr_tail;
  EXPECT_EQ(o.record["result"], "ok");
}

}  // namespace
}  // namespace kernelrl::sandbox
