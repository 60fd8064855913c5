#include "eval/device_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "eval/child_context.hpp"
#include "eval/gpu.hpp"
#include "eval/runner_candidate.hpp"
#include "kernelrl/build_config.hpp"
#include "sandbox/thread_census.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;

constexpr int kPagesFd = 3;  // where the runner finds the protocol's pages

// In the forked process: the pages at descriptor 3, then the runner program; never returns. The
// arguments were made before the fork (no allocation here).
[[noreturn]] void exec_runner(int pages_fd, char* const* argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // kept across exec: the runner dies with the child
  if (pages_fd == kPagesFd) {
    ::fcntl(kPagesFd, F_SETFD, 0);
  } else if (::dup2(pages_fd, kPagesFd) != kPagesFd) {
    _exit(127);
  }
  ::execv(build::gpu_runner_tool, argv);
  _exit(127);
}

}  // namespace

RunnerStart start_device_runner(const std::string& artifact, const std::vector<py::object>& params,
                                const RunnerOptions& options) {
  if (::access(build::gpu_runner_tool, X_OK) != 0) {
    throw TaskError{std::string("kernelrl-gpu-runner not found at ") + build::gpu_runner_tool +
                    " (build the kernelrl_runtime target)"};
  }
  auto pages = sandbox::SharedPages::create_in_memory_file(runner::kDataOffset);
  if (!pages) throw TaskError{"cannot start the candidate's process: " + pages.error().message};
  auto* h = new (pages->data()) runner::Header{};
  auto arena = std::make_shared<gpu::SharedArena>();
  if (auto made = arena->init(options.tensor_bytes); !made) {
    throw TaskError{"cannot allocate the candidate's device arena: " + made.error().message};
  }
  if (auto exported = arena->export_handle(h->ipc_handle, sizeof h->ipc_handle); !exported) {
    throw TaskError{"cannot export the candidate's device arena: " + exported.error().message};
  }
  h->device = arena->device();
  h->arena_bytes = options.tensor_bytes;

  ::signal(SIGCHLD, SIG_DFL);  // the runner's end must be waitable
  // kernelrl-gpu-runner PAGES_FD PAGES_BYTES PARENT_PID ARTIFACT (runner/device_runner.hpp)
  std::vector<std::string> args{"kernelrl-gpu-runner", std::to_string(kPagesFd), std::to_string(pages->size()),
                                std::to_string(::getpid()), artifact};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) exec_runner(pages->fd(), argv.data());
  if (pid < 0) throw TaskError{std::string("cannot start the candidate's process: fork failed: ") + std::strerror(errno)};
  // The runner may not read this process's memory through /proc/<pid>/mem (same user otherwise).
  ::prctl(PR_SET_DUMPABLE, 0);
  RunnerMemory memory;
  memory.data = static_cast<std::byte*>(arena->data());
  memory.bytes = options.tensor_bytes;
  memory.cuda_device = arena->device();
  // The child's copies into the arena (on its stream) end before the runner reads it.
  memory.settle_staging = [] { return gpu::synchronize_and_check(); };
  memory.owner = arena;
  auto candidate = std::make_unique<RunnerCandidate>(std::move(*pages), pid, std::move(memory), options.flush_caches,
                                                     1 << 20);
  RunnerStart out;
  // Its set-up and confinement report, before any candidate code runs there.
  out.isolation = candidate->read_report();
  if (h->rc != 0) throw TaskError{"the candidate's process could not set up its device: " + runner::read_text(h)};
  // Its threads now (the CUDA driver's included) are all it may have between calls.
  auto census = sandbox::thread_census(pid);
  if (!census) throw TaskError{"cannot count the candidate process's threads: " + census.error().message};
  candidate->set_threads(census->n_threads);
  out.isolation["threads_between_calls"] = census->n_threads;
  if (auto failed = candidate->load()) {
    out.loaded = std::move(*failed);
    return out;
  }
  if (auto placed = candidate->place_params(params); !placed) throw TaskError{placed.error().message};
  if (auto settled = gpu::synchronize_and_check(); !settled) throw TaskError{settled.error().message};
  out.loaded.candidate = std::move(candidate);
  return out;
}

}  // namespace kernelrl::eval
