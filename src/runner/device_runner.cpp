#include "runner/device_runner.hpp"

#include <cuda_runtime.h>

#include <string>

#include <nlohmann/json.hpp>

#include "runner/device_state.hpp"
#include "runner/protocol.hpp"
#include "sandbox/candidate_confinement.hpp"

namespace kernelrl::runner {

void serve_device_runner(sandbox::SharedPages pages, pid_t parent) {
  begin_forked_runner(pages, parent);
  const cudaError_t ready = cudaFree(nullptr);  // this process's context, made before the evaluation
  auto* h = reinterpret_cast<Header*>(pages.data());
  const nlohmann::json start = nlohmann::json::parse(wait_for_start(h, parent), nullptr, false);
  if (!start.is_object() || !start.contains("artifact") || !start["artifact"].is_string()) {
    fail_set_up(h, "START: no artifact");
  }
  if (ready != cudaSuccess) {
    fail_set_up(h, std::string("cannot create a CUDA context: ") + cudaGetErrorString(ready) + " (" +
                       cudaGetErrorName(ready) + ")");
  }
  const std::string artifact = start["artifact"].get<std::string>();
  DeviceState state;
  void* arena = nullptr;
  if (const std::string failed = set_up_device(h, state, arena); !failed.empty()) fail_set_up(h, failed);
  nlohmann::json report = sandbox::confine_candidate_process();
  report["started_ahead"] = true;
  answer_set_up(h, report.dump());
  RunnerHooks hooks;
  hooks.data = static_cast<std::byte*>(arena);
  hooks.data_bytes = h->arena_bytes;
  hooks.device = DLDevice{kDLCUDA, h->device};
  hooks.stream = state.stream;
  hooks.flush = flush_device;
  hooks.finish = finish_device;
  hooks.state = &state;
  serve(h, parent, artifact, hooks);
}

}  // namespace kernelrl::runner
