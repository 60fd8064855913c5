// The ranks of a data-parallel run as child processes of the launcher: started by fork + exec of
// the same program, watched by pid, stopped together through their process group.
//
// Why re-execute rather than fork a rank straight from the launcher: by the time a command runs,
// this process has loaded libtorch (whose thread pools may already exist) and, for --gpus, queried
// CUDA; fork copies only the calling thread, leaving locks other threads held taken forever in the
// child, and CUDA cannot be used in a child forked after it was initialised. exec gives each rank a
// fresh process, the same as a rank started by hand; between fork and exec the child only makes
// async-signal-safe calls on memory prepared before the fork.
#include "train/launcher.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace kernelrl::train {

namespace {

using common::make_error;

constexpr const char* kRank = "KERNELRL_RANK";
constexpr const char* kWorldSize = "KERNELRL_WORLD_SIZE";
constexpr const char* kHost = "KERNELRL_RENDEZVOUS_HOST";
constexpr const char* kPort = "KERNELRL_RENDEZVOUS_PORT";

// The integer value of `name`, or an error naming it.
common::Expected<int> int_variable(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return make_error(std::string(name) + " is not set (a rank needs all of " + kRank + ", " +
                                         kWorldSize + " and " + kPort + ")");
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > 1 << 20) {
    return make_error(std::string(name) + "='" + text + "': expected a non-negative integer");
  }
  return static_cast<int>(value);
}

// The current environment without the variables a rank is given, then the rank's own.
std::vector<std::string> rank_environment(int rank, int world, int port, bool pin_gpus) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == kRank || name == kWorldSize || name == kHost || name == kPort) continue;
    if (pin_gpus && name == "CUDA_VISIBLE_DEVICES") continue;
    out.push_back(entry);
  }
  out.push_back(std::string(kRank) + "=" + std::to_string(rank));
  out.push_back(std::string(kWorldSize) + "=" + std::to_string(world));
  out.push_back(std::string(kHost) + "=127.0.0.1");
  out.push_back(std::string(kPort) + "=" + std::to_string(port));
  if (pin_gpus) out.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(rank));
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string how_it_ended(int rank, int status) {
  if (WIFEXITED(status)) return "rank " + std::to_string(rank) + " exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "rank " + std::to_string(rank) + " was killed by signal " + std::to_string(WTERMSIG(status));
  return "rank " + std::to_string(rank) + " ended with wait status " + std::to_string(status);
}

struct Rank {
  pid_t pid = -1;
  bool running = false;
};

// Waits (polling) until every running rank has ended or `deadline` passes; true when all ended.
bool reap_until(std::vector<Rank>& ranks, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    bool any = false;
    for (auto& r : ranks) {
      if (!r.running) continue;
      int status = 0;
      const pid_t got = ::waitpid(r.pid, &status, WNOHANG);
      if (got == r.pid || (got < 0 && errno == ECHILD)) r.running = false;
      any |= r.running;
    }
    if (!any) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Ends the process group (the ranks and whatever they started): SIGTERM, then SIGKILL past `grace`.
void stop_all(pid_t group, std::vector<Rank>& ranks, std::chrono::milliseconds grace) {
  ::kill(-group, SIGTERM);
  if (!reap_until(ranks, std::chrono::steady_clock::now() + grace)) {
    ::kill(-group, SIGKILL);
    reap_until(ranks, std::chrono::steady_clock::time_point::max());
  }
  ::kill(-group, SIGKILL);  // children of the ranks that outlived them
}

}  // namespace

common::Expected<std::optional<RankEnvironment>> rank_from_environment() {
  if (!std::getenv(kRank)) return std::optional<RankEnvironment>{};
  RankEnvironment env;
  auto rank = int_variable(kRank);
  if (!rank) return rank.error();
  auto world = int_variable(kWorldSize);
  if (!world) return world.error();
  auto port = int_variable(kPort);
  if (!port) return port.error();
  if (*world < 1 || *rank >= *world) {
    return make_error(std::string(kRank) + "=" + std::to_string(*rank) + " with " + kWorldSize + "=" +
                      std::to_string(*world) + ": expected 0 <= rank < world size");
  }
  if (*port < 1 || *port > 65535) return make_error(std::string(kPort) + "=" + std::to_string(*port) + ": out of range");
  env.info = {*rank, *world};
  env.port = *port;
  if (const char* host = std::getenv(kHost); host && *host) env.host = host;
  return std::optional<RankEnvironment>{env};
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

common::Fallible launch_ranks(const LaunchConfig& config, std::vector<pid_t>* pids) {
  if (config.command.empty()) return make_error("launch: no command to run");
  if (config.n_ranks < 1) return make_error("launch: " + std::to_string(config.n_ranks) + " ranks (expected at least 1)");
  const int port = free_loopback_port();
  if (port < 0) return make_error(std::string("launch: no free TCP port on the loopback interface: ") + std::strerror(errno));
  std::vector<std::string> argv_strings = config.command;
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<std::vector<std::string>> env_strings;
  std::vector<std::vector<char*>> envs;
  for (int r = 0; r < config.n_ranks; ++r) env_strings.push_back(rank_environment(r, config.n_ranks, port, config.pin_gpus));
  for (auto& e : env_strings) envs.push_back(pointers(e));

  const pid_t launcher = ::getpid();
  std::vector<Rank> ranks(static_cast<std::size_t>(config.n_ranks));
  pid_t group = 0;  // the ranks' process group: the first rank's pid
  for (int r = 0; r < config.n_ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      if (group > 0) stop_all(group, ranks, config.grace);
      return make_error("launch: cannot start rank " + std::to_string(r) + ": " + why);
    }
    if (pid == 0) {
      ::setpgid(0, group);                   // rank 0 leads a new group; the others join it
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);    // the launcher gone (even killed): so is the rank
      if (::getppid() != launcher) ::_exit(125);  // it died before prctl took effect
      ::execve(argv[0], argv.data(), envs[static_cast<std::size_t>(r)].data());
      ::_exit(127);  // could not execute the program
    }
    if (group == 0) group = pid;
    ::setpgid(pid, group);  // also here: neither side may signal the group before it exists
    ranks[static_cast<std::size_t>(r)] = {pid, true};
    if (pids) pids->push_back(pid);
  }

  // Watch: the first rank that ends otherwise than with status 0 stops the run.
  while (true) {
    bool any_running = false;
    for (int r = 0; r < config.n_ranks; ++r) {
      Rank& rank = ranks[static_cast<std::size_t>(r)];
      if (!rank.running) continue;
      int status = 0;
      const pid_t got = ::waitpid(rank.pid, &status, WNOHANG);
      if (got == 0) {
        any_running = true;
        continue;
      }
      rank.running = false;
      if (got < 0) status = 0xff00;  // lost (not our child any more): counts as a failure
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      std::string failure = how_it_ended(r, status);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 127) failure += " (could not execute " + config.command[0] + ")";
      stop_all(group, ranks, config.grace);
      return make_error(failure + "; the other ranks were stopped");
    }
    if (!any_running) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-group, SIGKILL);  // children of the ranks that outlived them
  return common::Ok{};
}

}  // namespace kernelrl::train
