#include "eval/device_runner.hpp"

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "eval/child_context.hpp"
#include "eval/gpu.hpp"
#include "eval/runner_candidate.hpp"
#include "kernelrl/build_config.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

RunnerStart start_device_runner(const std::string& artifact, const std::vector<py::object>& params,
                                const RunnerOptions& options) {
  auto pages = sandbox::SharedPages::create_in_memory_file(runner::kDataOffset);
  if (!pages) throw TaskError{"cannot start the candidate's process: " + pages.error().message};
  auto* h = new (pages->data()) runner::Header{};
  RunnerMemory memory = device_arena(h, options.tensor_bytes);
  // kernelrl-gpu-runner PAGES_FD PAGES_BYTES PARENT_PID ARTIFACT (runner/device_runner.hpp)
  const pid_t pid = spawn_runner(build::gpu_runner_tool, pages->fd(),
                                 {std::to_string(pages->size()), std::to_string(::getpid()), artifact});
  auto candidate = std::make_unique<RunnerCandidate>(std::move(*pages), pid, std::move(memory), options.flush_caches,
                                                     1 << 20);
  RunnerStart out;
  out.isolation = candidate->read_set_up_report();
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
