#include "common/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

extern char** environ;

namespace kernelrl::common {

namespace {

using clock_type = std::chrono::steady_clock;

// Everything between fork and exec must be async-signal-safe: argv/envp are built beforehand.
[[noreturn]] void exec_child(int out_fd, const std::filesystem::path& cwd, char* const* argv,
                             char* const* envp, const RunLimits& limits) {
  if (limits.own_process_group) ::setpgid(0, 0);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
  if (limits.address_space_bytes) {
    rlimit r{limits.address_space_bytes, limits.address_space_bytes};
    ::setrlimit(RLIMIT_AS, &r);
  }
  if (limits.file_size_bytes) {
    rlimit r{limits.file_size_bytes, limits.file_size_bytes};
    ::setrlimit(RLIMIT_FSIZE, &r);
  }
  if (limits.nice > 0) (void)::nice(limits.nice);
  ::execvpe(argv[0], argv, envp);
  _exit(127);
}

}  // namespace

Expected<RunResult> run_process(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                                const std::vector<std::string>& env, const RunLimits& limits) {
  if (args.empty()) return make_error("run_process: empty command");
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // Overrides first and inherited duplicates dropped: getenv() returns the first match.
  std::vector<std::string> env_store(env.begin(), env.end());
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& o : env) overridden = overridden || std::string_view(o).substr(0, o.find('=')) == name;
    if (!overridden) env_store.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  auto t0 = clock_type::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return make_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) exec_child(fds[1], cwd, argv.data(), envp.data(), limits);
  // Also done in the child; whichever runs first wins the race harmlessly.
  if (limits.own_process_group) ::setpgid(pid, pid);
  const pid_t kill_target = limits.own_process_group ? -pid : pid;
  ::close(fds[1]);

  RunResult result;
  auto deadline = t0 + limits.wall_time;
  char buf[65536];
  bool open = true;
  while (open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) continue;  // loop re-checks the deadline
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      std::size_t room = limits.max_output_bytes - std::min(limits.max_output_bytes, result.output.size());
      result.output.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  if (result.timed_out) ::kill(kill_target, SIGKILL);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && limits.own_process_group) ::kill(-pid, SIGKILL);  // stray grandchildren of the group
  result.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.term_signal = WTERMSIG(status);
  if (result.exit_code == 127 && result.output.empty()) {
    return make_error("cannot run '" + args[0] + "': not found or not executable");
  }
  return result;
}

}  // namespace kernelrl::common
