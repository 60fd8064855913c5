#include "eval/runner_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "eval/child_context.hpp"
#include "kernelrl/build_config.hpp"
#include "runner/protocol.hpp"

extern char** environ;

namespace kernelrl::eval {

namespace {

// The descriptor number the runner finds its pages at.
constexpr int kPagesFd = 3;

// This process's runner (one evaluation per child), or why it could not be started.
struct Ahead {
  RunnerKind kind = RunnerKind::NONE;
  std::optional<sandbox::SharedPages> pages;
  pid_t pid = -1;
  std::string error;
};

std::optional<Ahead>& ahead() {
  static std::optional<Ahead> a;
  return a;
}

const char* program_of(RunnerKind kind) {
  return kind == RunnerKind::KERNELBENCH ? build::kernelbench_runner_program : build::runner_program;
}

const char* kind_name(RunnerKind kind) {
  return kind == RunnerKind::HOST ? "host" : kind == RunnerKind::NATIVE ? "native" : "kernelbench";
}

// The runner's environment: this process's, less what would change how its program loads
// (LD_PRELOAD, LD_AUDIT), plus what keeps it from writing anything (no CUDA JIT cache, no .pyc
// files) and OpenMP's workers asleep between parallel regions rather than spinning (CPU time between
// the evaluator's requests is refused: eval/runner_candidate.cpp).
std::vector<std::string> runner_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "LD_PRELOAD" || name == "LD_AUDIT" || name == "CUDA_CACHE_DISABLE" || name == "PYTHONDONTWRITEBYTECODE" ||
        name == "OMP_WAIT_POLICY") {
      continue;
    }
    env.push_back(entry);
  }
  env.push_back("CUDA_CACHE_DISABLE=1");
  env.push_back("PYTHONDONTWRITEBYTECODE=1");
  env.push_back("OMP_WAIT_POLICY=PASSIVE");
  return env;
}

// Starts `kind`'s program with `pages_fd` as its descriptor kPagesFd and nothing else but the
// standard three (stdin from /dev/null); its pid, or an Error.
common::Expected<pid_t> spawn_runner(RunnerKind kind, const std::string& device, int pages_fd) {
  // A copy above kPagesFd, so the dup2 below always makes a fresh descriptor without close-on-exec.
  const int high = ::fcntl(pages_fd, F_DUPFD_CLOEXEC, kPagesFd + 1);
  if (high < 0) return common::make_error(std::string("cannot start the candidate's process: dup: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, high, kPagesFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, kPagesFd + 1);
  const std::string parent = std::to_string(::getpid());
  const std::string fd = std::to_string(kPagesFd);
  std::vector<std::string> args{program_of(kind), "--kind", kind_name(kind), "--device", device,
                                "--pages-fd", fd, "--parent", parent};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = runner_environment();
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(high);
  if (rc != 0) {
    return common::make_error(std::string("cannot start the candidate's process ") + argv[0] + ": " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

RunnerKind runner_kind(const ChildRequest& r) {
  if (r.op != ChildOp::EVAL || !r.options.defenses) return RunnerKind::NONE;
  switch (r.format) {
    case common::Format::KERNELBENCH: {
      const CandidateProcess kb = r.options.kernelbench_candidate_process;
      const bool apart = kb == CandidateProcess::ALWAYS || (kb == CandidateProcess::ON_GPU && r.device == "cuda");
      return apart ? RunnerKind::KERNELBENCH : RunnerKind::NONE;
    }
    case common::Format::NATIVE:
      return r.device == "cuda" && r.options.native_candidate_process ? RunnerKind::NATIVE : RunnerKind::NONE;
    case common::Format::HOST:
      return r.options.separate_process ? RunnerKind::HOST : RunnerKind::NONE;
  }
  return RunnerKind::NONE;
}

void start_runner_ahead(RunnerKind kind, const std::string& device) {
  Ahead& a = ahead().emplace();
  a.kind = kind;
  auto pages = sandbox::SharedPages::create_in_memory_file(runner::kDataOffset);
  if (!pages) {
    a.error = "cannot start the candidate's process: " + pages.error().message;
    return;
  }
  new (pages->data()) runner::Header{};
  ::signal(SIGCHLD, SIG_DFL);  // the runner's end must be waitable
  auto pid = spawn_runner(kind, device, pages->fd());
  if (!pid) {
    a.error = pid.error().message;
    return;
  }
  // The runner may not read this process's memory through /proc/<pid>/mem (same user otherwise).
  ::prctl(PR_SET_DUMPABLE, 0);
  a.pages = std::move(*pages);
  a.pid = *pid;
}

pid_t runner_ahead_pid() { return ahead() ? ahead()->pid : -1; }

StartedRunner take_runner(RunnerKind kind) {
  auto& a = ahead();
  if (!a || a->kind != kind) throw TaskError{"the candidate's process was not started ahead of the evaluation (the engine's fault)"};
  if (!a->pages) throw TaskError{a->error};
  StartedRunner out{std::move(*a->pages), a->pid};
  a.reset();
  return out;
}

}  // namespace kernelrl::eval
