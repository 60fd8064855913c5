#include "eval/runner_ahead.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "eval/child_context.hpp"
#include "eval/kernelbench_serve.hpp"
#include "runner/device_runner.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::eval {

namespace {

// This process's runner (one evaluation per child), or why it could not be forked.
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

}  // namespace

RunnerKind runner_kind(const ChildRequest& r) {
  if (r.op != ChildOp::EVAL || !r.options.defenses) return RunnerKind::NONE;
  const CandidateProcess kb = r.options.kernelbench_candidate_process;
  if (r.format == common::Format::KERNELBENCH &&
      (kb == CandidateProcess::ALWAYS || (kb == CandidateProcess::ON_GPU && r.device == "cuda"))) {
    return RunnerKind::KERNELBENCH;
  }
  if (r.format == common::Format::NATIVE && r.device == "cuda" && r.options.native_candidate_process) {
    return RunnerKind::NATIVE;
  }
  return RunnerKind::NONE;
}

void fork_runner_ahead(RunnerKind kind, const std::string& device) {
  Ahead& a = ahead().emplace();
  a.kind = kind;
  auto pages = sandbox::SharedPages::create_in_memory_file(runner::kDataOffset);
  if (!pages) {
    a.error = "cannot start the candidate's process: " + pages.error().message;
    return;
  }
  new (pages->data()) runner::Header{};
  ::signal(SIGCHLD, SIG_DFL);  // the runner's end must be waitable
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (kind == RunnerKind::NATIVE) runner::serve_device_runner(std::move(*pages), parent);
    serve_kernelbench_runner(std::move(*pages), parent, device == "cuda");
  }
  if (pid < 0) {
    a.error = std::string("cannot start the candidate's process: fork failed: ") + std::strerror(errno);
    return;
  }
  // The runner may not read this process's memory through /proc/<pid>/mem (same user otherwise).
  ::prctl(PR_SET_DUMPABLE, 0);
  a.pages = std::move(*pages);
  a.pid = pid;
}

ForkedRunner take_runner_ahead(RunnerKind kind) {
  auto& a = ahead();
  if (!a || a->kind != kind) throw TaskError{"the candidate's process was not started ahead of the evaluation (the engine's fault)"};
  if (!a->pages) throw TaskError{a->error};
  ForkedRunner out{std::move(*a->pages), a->pid};
  a.reset();
  return out;
}

}  // namespace kernelrl::eval
