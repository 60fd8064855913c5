// Processes the service tests and bench run: a redis-server of their own on a free loopback port
// (append-only file fsynced on every write, in a given folder, so a restart loses nothing
// acknowledged) and kernelrl commands as child processes, each in its own process group with its
// output in a log file, stopped when their handle goes.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "service/redis.hpp"

namespace kernelrl::service::testing {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

inline std::string source_path(const std::string& relative) { return std::string(KERNELRL_SOURCE_DIR) + "/" + relative; }

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Waits until `ready()` or `timeout_s`; returns whether it became ready.
template <class F>
bool eventually(double timeout_s, F ready, int poll_ms = 50) {
  const auto t0 = clock_type::now();
  while (seconds_since(t0) < timeout_s) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return ready();
}

// A port nobody listens on right now.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A child process in its own process group, its output in `log`. Stopped (SIGTERM, then SIGKILL to
// the group) when destroyed.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const std::vector<std::string>& argv, const fs::path& log, const std::vector<std::string>& env = {})
      : log_(log) {
    // Everything the child needs is prepared before fork: the test process has threads.
    std::vector<std::string> environment = env;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string name = entry.substr(0, entry.find('='));
      bool overridden = false;
      for (const auto& mine : env) overridden |= mine.rfind(name + "=", 0) == 0;
      if (!overridden) environment.push_back(entry);
    }
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      if (out >= 0) {
        ::dup2(out, STDOUT_FILENO);
        ::dup2(out, STDERR_FILENO);
      }
      ::execvpe(args[0], args.data(), envp.data());
      _exit(127);
    }
    if (out >= 0) ::close(out);
    ::setpgid(pid_, pid_);
  }
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), log_(std::move(o.log_)), status_(o.status_) { o.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& o) noexcept {
    stop();
    pid_ = o.pid_;
    log_ = std::move(o.log_);
    status_ = o.status_;
    o.pid_ = -1;
    return *this;
  }
  ~ChildProcess() { stop(); }

  pid_t pid() const { return pid_; }
  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      pid_ = -1;
      return false;
    }
    return true;
  }
  void kill_now() {  // SIGKILL to the process alone (its engine's processes notice on their own)
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    int status = 0;
    if (pid_ > 0) ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // SIGTERM, up to grace_s for a clean exit, then SIGKILL to the whole group. Returns the exit status.
  int stop(double grace_s = 20) {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    eventually(grace_s, [&] { return !alive(); }, 20);
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      status_ = status;
      pid_ = -1;
    }
    return status_;
  }
  std::string output() const { return read_text(log_); }

 private:
  pid_t pid_ = -1;
  fs::path log_;
  int status_ = -1;
};

// redis-server on a free loopback port; data in `dir`, kept across restart(); with `password`, its
// requirepass (url() leaves it out, redis_url() has it).
class RedisServer {
 public:
  explicit RedisServer(fs::path dir, std::string password = "")
      : dir_(std::move(dir)), password_(std::move(password)), port_(free_port()) {
    start();
  }
  void start() {
    fs::create_directories(dir_);
    std::vector<std::string> argv = {"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--dir",
                                     dir_.string(), "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                                     "--protected-mode", "no"};
    if (!password_.empty()) argv.insert(argv.end(), {"--requirepass", password_});
    process_ = ChildProcess(argv, dir_ / ("redis-" + std::to_string(n_starts_++) + ".log"));
    up_ = eventually(20, [&] { return RedisConnection::connect(redis_url(), 1).ok(); });
  }
  bool up() const { return up_; }  // whether the last start() got an answer
  std::string log() const { return process_.output(); }
  void kill() { process_.kill_now(); }  // SIGKILL: only what the append-only file holds survives
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  RedisUrl redis_url() const {
    RedisUrl u = *RedisUrl::parse(url());
    u.password = password_;
    return u;
  }
  std::unique_ptr<RedisConnection> connect() const { return std::move(*RedisConnection::connect(redis_url(), 5)); }

 private:
  fs::path dir_;
  std::string password_;
  int port_;
  int n_starts_ = 0;
  bool up_ = false;
  ChildProcess process_;
};

}  // namespace kernelrl::service::testing
