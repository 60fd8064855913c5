#include "sandbox/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/report_mac.hpp"
#include "sandbox/confinement.hpp"

namespace kernelrl::sandbox {

namespace {

using clock_type = std::chrono::steady_clock;

// Children killed after they reported, not yet reaped (the worker is single-threaded).
std::vector<pid_t> g_unreaped;
// Process groups of killed children whose other members (a host candidate's runner,
// eval/host_runner.hpp) may still have to be reaped: orphaned, they come to this process when it
// is a child subreaper (become_subreaper).
std::vector<pid_t> g_killed_groups;
// The parent whose end makes watch_child stop (end_watched_children_when_orphaned); 0: never.
pid_t g_orphaned_unless_parent = 0;

std::string read_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  auto size = static_cast<std::size_t>(in.tellg());
  std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string s(size - start, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  if (start > 0) {
    auto nl = s.find('\n');
    if (nl != std::string::npos) s = "..." + s.substr(nl);
  }
  return s;
}

// {"phase": NAME}, or {"phase": NAME, "limits_s": {PHASE: SECONDS, ...}}.
bool is_phase_line(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("phase") || !j["phase"].is_string()) return false;
  return j.size() == 1 || (j.size() == 2 && j.contains("limits_s") && j["limits_s"].is_object());
}

}  // namespace

std::string describe_end(const ChildOutcome& o) {
  if (o.unauthenticated) {
    return "wrote a line on its report channel that failed authentication in phase '" + o.last_phase +
           "' (not the evaluating process's: a forged report?)";
  }
  if (o.orphaned) return "stopped in phase '" + o.last_phase + "': the process that started the worker ended";
  if (o.timed_out) {
    std::ostringstream s;
    s << "phase '" << o.last_phase << "' ran past its limit of " << o.phase_limit_s << " s";
    return s.str();
  }
  if (o.term_signal) {
    const char* abbrev = sigabbrev_np(o.term_signal);
    return "killed by signal " + std::to_string(o.term_signal) + " (SIG" + (abbrev ? abbrev : "?") + ", " +
           strsignal(o.term_signal) + ")";
  }
  return "exited with code " + std::to_string(o.exit_code) + " before reporting a result";
}

void end_watched_children_when_orphaned(pid_t parent) { g_orphaned_unless_parent = parent; }

void reap_children(bool wait) {
  std::vector<pid_t> left;
  for (pid_t pid : g_unreaped) {
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(pid, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == 0) left.push_back(pid);
  }
  g_unreaped = std::move(left);
  std::vector<pid_t> groups_left;
  for (pid_t group : g_killed_groups) {
    pid_t r;
    while ((r = ::waitpid(-group, nullptr, wait ? 0 : WNOHANG)) > 0 || (r < 0 && errno == EINTR)) {
    }
    // Members not yet ours to reap (their parent is still ending) keep the group on the list.
    if (::kill(-group, 0) == 0 && !wait) groups_left.push_back(group);
  }
  g_killed_groups = std::move(groups_left);
}

bool wait_for_group_end(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    while (::waitpid(-pid, nullptr, WNOHANG) > 0) {
    }
    if (::kill(-pid, 0) != 0 && errno == ESRCH) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool become_subreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

std::size_t n_unreaped_children() { return g_unreaped.size(); }

ChildHandle spawn_child(const std::function<void(int report_fd, int request_fd)>& body, const std::string& scratch_dir) {
  reap_children(false);
  ChildHandle child;
  child.log_path = scratch_dir + "/child.log";
  // Socket pairs, not pipes: a pipe can be reopened for writing through /proc/self/fd/N by path,
  // which write confinement (Landlock) does not cover; opening a socket that way fails (ENXIO), so
  // only the descriptor itself writes the report.
  int report[2], request[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report) != 0) {
    child.error = std::string("socketpair failed: ") + std::strerror(errno);
    return child;
  }
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, request) != 0) {
    ::close(report[0]);
    ::close(report[1]);
    child.error = std::string("socketpair failed: ") + std::strerror(errno);
    return child;
  }
  const pid_t worker = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // A worker killed outright (its machine's service worker SIGKILLed) must not leave a child
    // spinning in a candidate's infinite loop with nobody to enforce the phase limits.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != worker) _exit(125);
    ::close(report[0]);
    ::close(request[1]);
    ::setpgid(0, 0);
    if (::chdir(scratch_dir.c_str()) != 0) _exit(125);
    // No file the child writes, its log included, may grow past kMaxFileBytes; the hard limit
    // follows when it confines itself to run candidate code, or a candidate's process does
    // (confine_candidate_process): until then it may size a memory file past it.
    (void)limit_file_size(false);
    int log = ::open(child.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log >= 0) {
      ::dup2(log, STDOUT_FILENO);
      ::dup2(log, STDERR_FILENO);
    }
    // Only its own two channels stay open: no fd of the worker, of another child (whose report it
    // could read) or of the engine is inherited.
    const int report_fd = ::fcntl(report[1], F_DUPFD, 10), request_fd = ::fcntl(request[0], F_DUPFD, 10);
    if (report_fd < 0 || request_fd < 0 || ::dup2(report_fd, 3) != 3 || ::dup2(request_fd, 4) != 4) _exit(125);
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
    body(3, 4);
    _exit(0);  // skip interpreter and CUDA teardown: the driver reclaims everything at exit
  }
  ::close(report[1]);
  ::close(request[0]);
  if (pid < 0) {
    ::close(report[0]);
    ::close(request[1]);
    child.error = std::string("fork failed: ") + std::strerror(errno);
    return child;
  }
  ::setpgid(pid, pid);
  child.pid = pid;
  child.report_fd = report[0];
  child.request_fd = request[1];
  return child;
}

ChildOutcome watch_child(ChildHandle& child, const std::map<std::string, double>& phase_limits_s,
                         double default_limit_s, const std::function<void(const std::string&)>& on_phase) {
  ChildOutcome out;
  if (child.pid <= 0) {
    out.stderr_tail = child.error;
    return out;
  }
  // The request pipe now carries one "go" line per phase line (the child waits for it); never
  // blocking: a child that floods phase lines without reading must not stall the worker.
  if (child.request_fd >= 0) ::fcntl(child.request_fd, F_SETFL, O_NONBLOCK);
  ::signal(SIGPIPE, SIG_IGN);  // a grant to a child that already exited must not kill the watcher
  const pid_t pid = child.pid;
  const int report_fd = child.report_fd;
  const auto t0 = clock_type::now();
  const std::string& log_path = child.log_path;
  std::map<std::string, double> limits = phase_limits_s;
  bool limits_announced = false;  // only the first phase line carrying limits_s sets them
  std::uint64_t n_lines = 0;      // lines read, for their MACs' numbers
  auto limit_for = [&](const std::string& phase) {
    auto it = limits.find(phase);
    return it != limits.end() ? it->second : default_limit_s;
  };
  out.last_phase = kStartPhase;
  double limit_s = default_limit_s;
  auto deadline = clock_type::now() + std::chrono::duration<double>(limit_s);
  std::string buffer;
  char chunk[8192];
  bool open = true;
  while (open) {
    auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    if (left_ms <= 0) {
      out.timed_out = true;
      out.phase_limit_s = limit_s;
      break;
    }
    if (g_orphaned_unless_parent > 0 && ::getppid() != g_orphaned_unless_parent) {
      out.orphaned = true;
      break;
    }
    pollfd p{report_fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left_ms, 1000)));
    if (rc <= 0) continue;
    ssize_t n = ::read(report_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (auto nl = buffer.find('\n'); nl != std::string::npos && !out.unauthenticated; nl = buffer.find('\n')) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (!child.report_key.empty()) {
        auto raw = common::verified_line(child.report_key, n_lines++, line);
        if (!raw) {
          out.unauthenticated = true;
          break;
        }
        line = std::move(*raw);
      }
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      if (is_phase_line(j)) {
        if (j.contains("limits_s") && !limits_announced) {
          limits_announced = true;
          for (const auto& [phase, limit] : j["limits_s"].items()) {
            if (limit.is_number() && limit.get<double>() > 0) limits[phase] = limit.get<double>();
          }
        }
        out.last_phase = j["phase"].get<std::string>();
        if (on_phase) on_phase(out.last_phase);  // may block (the device lock); not the child's time
        if (child.request_fd >= 0) (void)!::write(child.request_fd, "go\n", 3);
        limit_s = limit_for(out.last_phase);
        deadline = clock_type::now() + std::chrono::duration<double>(limit_s);
      } else {
        out.record = std::move(j);
        out.has_record = true;
      }
    }
    if (out.has_record || out.unauthenticated) break;  // done; grandchildren holding the pipe open must not delay us
    if (buffer.size() > (64u << 20)) break;  // a runaway writer; the record never gets this big
  }
  ::kill(-pid, SIGKILL);  // the child's group: the child itself and anything it started
  g_killed_groups.push_back(pid);
  ::close(report_fd);
  if (child.request_fd >= 0) ::close(child.request_fd);
  child.request_fd = -1;
  child.report_fd = -1;
  child.pid = -1;
  if (out.has_record) {
    // Its answer is in; tearing down its CUDA context can take a while and need not delay us.
    g_unreaped.push_back(pid);
    out.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    out.stderr_tail = read_tail(log_path, 2000);
    return out;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !out.timed_out && !out.orphaned && !out.has_record) out.term_signal = WTERMSIG(status);
  out.stderr_tail = read_tail(log_path, 2000);
  return out;
}


ChildOutcome run_child_process(const std::function<void(int)>& body, const std::string& scratch_dir,
                               const std::map<std::string, double>& phase_limits_s, double default_limit_s) {
  ChildHandle child = spawn_child([&](int report_fd, int) { body(report_fd); }, scratch_dir);
  return watch_child(child, phase_limits_s, default_limit_s, {});
}

bool wait_for_grant(int request_fd) {
  char c = 0;
  while (true) {
    ssize_t n = ::read(request_fd, &c, 1);  // byte by byte: never past this grant's line
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
  }
}

void discard_child(ChildHandle& child) {
  if (child.request_fd >= 0) ::close(child.request_fd);
  if (child.report_fd >= 0) ::close(child.report_fd);
  if (child.pid > 0) {
    ::kill(-child.pid, SIGKILL);
    g_unreaped.push_back(child.pid);
    g_killed_groups.push_back(child.pid);
  }
  child = ChildHandle{};
}

}  // namespace kernelrl::sandbox
