#include "runner/device_runner.hpp"

#include <cuda_runtime.h>

#include <string>

#include <nlohmann/json.hpp>

#include "audit/launch_audit.hpp"
#include "audit/own_kernels.hpp"
#include "runner/confine.hpp"
#include "runner/device_state.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::runner {

namespace {

// The runner's device and what it records of each call's launches (audit/launch_audit.hpp).
struct NativeState {
  DeviceState device;
  audit::LaunchAudit launches;
  bool watching = false;  // the launch audit is installed
};

NativeState& native(void* state) { return *static_cast<NativeState*>(state); }

void before_call(void* state) { flush_device(&native(state).device); }

void begin_record(void* state) {
  NativeState& n = native(state);
  if (n.watching) n.launches.begin_call(n.device.stream);
}

const char* finish(void* state) { return finish_device(&native(state).device); }

std::string call_record(void* state) {
  NativeState& n = native(state);
  if (!n.watching) return "{}";
  return nlohmann::json{{"launches", audit::to_json(n.launches.end_call())}}.dump();
}

// The candidate's kernels, read from its library before any of its code runs, and the CUPTI
// subscription that judges every launch against them. The report says whether it is on.
void watch_launches(NativeState& n, const std::string& artifact, nlohmann::json& report) {
  auto own = audit::own_kernel_names({artifact});
  common::Fallible installed = own ? n.launches.install(std::move(*own)) : common::Fallible(own.error());
  n.watching = static_cast<bool>(installed);
  report["launch_audit"] = n.watching;
  if (!installed) report["launch_audit_error"] = installed.error().message;
}

}  // namespace

void serve_device_runner(sandbox::SharedPages pages, pid_t parent) {
  nlohmann::json report = confine_files_at_start(true);  // before the CUDA driver starts its threads
  const cudaError_t ready = cudaFree(nullptr);  // this process's context, made before the evaluation
  auto* h = reinterpret_cast<Header*>(pages.data());
  const nlohmann::json start = nlohmann::json::parse(wait_for_start(h, parent), nullptr, false);
  if (!start.is_object() || !start.contains("artifact") || !start["artifact"].is_string()) {
    fail_set_up(h, "START: expected {\"artifact\": PATH}");
  }
  if (ready != cudaSuccess) {
    fail_set_up(h, std::string("cannot create a CUDA context: ") + cudaGetErrorString(ready) + " (" +
                       cudaGetErrorName(ready) + ")");
  }
  const std::string artifact = start["artifact"].get<std::string>();
  static NativeState state;  // lives until the process ends: CUPTI's callbacks point into it
  void* arena = nullptr;
  if (const std::string failed = set_up_device(h, state.device, arena); !failed.empty()) fail_set_up(h, failed);
  watch_launches(state, artifact, report);
  report.update(confine_calls(false));
  answer_set_up(h, report.dump());
  RunnerHooks hooks;
  hooks.data = static_cast<std::byte*>(arena);
  hooks.data_bytes = h->arena_bytes;
  hooks.device = DLDevice{kDLCUDA, h->device};
  hooks.stream = state.device.stream;
  hooks.before_call = before_call;
  hooks.begin_record = begin_record;
  hooks.finish = finish;
  hooks.call_record = call_record;
  hooks.state = &state;
  serve(h, parent, artifact, hooks);
}

}  // namespace kernelrl::runner
