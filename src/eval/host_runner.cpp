#include "eval/host_runner.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "eval/runner_candidate.hpp"
#include "runner/cache_sweep.hpp"
#include "runner/protocol.hpp"
#include "sandbox/shared_pages.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using runner::Header;

[[noreturn]] void run_runner(Header* h, std::byte* data, std::size_t data_bytes, pid_t parent,
                             const std::string& artifact, const ConfineProcess& confine) {
  // Dies with the child (and so with the engine's kill of the child); keeps no descriptor of it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(1);
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  runner::write_text(h, (confine ? confine() : nlohmann::json::object()).dump());
  h->reply.ring(1);
  runner::CacheSweep sweep;
  runner::RunnerHooks hooks;
  hooks.data = data;
  hooks.data_bytes = data_bytes;
  hooks.flush = runner::CacheSweep::run;
  hooks.state = &sweep;
  runner::serve(h, parent, artifact, hooks);
}

}  // namespace

RunnerStart start_host_runner(const std::string& artifact, const std::vector<py::object>& params,
                              const RunnerOptions& options, const ConfineProcess& confine) {
  RunnerStart out;
  auto pages = sandbox::SharedPages::create(runner::kDataOffset + options.tensor_bytes);
  if (!pages) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = "cannot start the candidate's process: " + pages.error().message;
    return out;
  }
  auto* h = new (pages->data()) Header{};
  std::byte* data = pages->data() + runner::kDataOffset;
  ::signal(SIGCHLD, SIG_DFL);  // the runner's end must be waitable
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) run_runner(h, data, options.tensor_bytes, parent, artifact, confine);
  if (pid < 0) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = std::string("cannot start the candidate's process: fork failed: ") + std::strerror(errno);
    return out;
  }
  // The runner may not read this process's memory through /proc/<pid>/mem (same user otherwise).
  ::prctl(PR_SET_DUMPABLE, 0);
  RunnerMemory memory;
  memory.data = data;
  memory.bytes = options.tensor_bytes;
  auto runner = std::make_unique<RunnerCandidate>(std::move(*pages), pid, std::move(memory), options.flush_caches, 1);
  // Its confinement report (read before any candidate code runs there), then the load.
  out.isolation = runner->read_report();
  if (auto failed = runner->load()) {
    out.loaded = std::move(*failed);
    return out;
  }
  if (auto placed = runner->place_params(params); !placed) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = placed.error().message;
    return out;
  }
  out.loaded.candidate = std::move(runner);
  return out;
}

}  // namespace kernelrl::eval
