#include "eval/device_runner.hpp"

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/child_context.hpp"
#include "eval/gpu.hpp"
#include "eval/runner_ahead.hpp"
#include "eval/runner_candidate.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

RunnerStart start_device_runner(const std::string& artifact, const std::vector<py::object>& params,
                                const RunnerOptions& options) {
  ForkedRunner forked = take_runner_ahead(RunnerKind::NATIVE);
  auto* h = reinterpret_cast<runner::Header*>(forked.pages.data());
  RunnerMemory memory = device_arena(h, options.tensor_bytes);
  const std::string start = nlohmann::json{{"artifact", artifact}}.dump();
  auto candidate = std::make_unique<RunnerCandidate>(std::move(forked.pages), forked.pid, std::move(memory),
                                                     options.flush_caches, 1 << 20);
  RunnerStart out;
  candidate->start(start);
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
