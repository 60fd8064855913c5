#include "audit/launch_audit.hpp"

#include <cuda.h>
#include <cupti.h>  // with the parameter structs of generated_cuda_meta.h

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "audit/own_kernels.hpp"

namespace kernelrl::audit {
namespace {

constexpr std::size_t kMaxForeignNames = 8;
constexpr const char* kUnnamedKernel = "<unnamed kernel>";

// What an entry point does with a kernel.
enum class Kind {
  LAUNCH,        // launches one kernel on a stream (or captures it, when the stream is capturing)
  GRAPH_NODE,    // puts a kernel into a graph without launching it
  GRAPH_LAUNCH,  // launches a graph: replays kernels already judged
  HEARTBEAT,     // cuDriverGetVersion: end_call's proof that the callbacks still arrive
};

struct EntryPoint {
  CUpti_CallbackId cbid;  // in CUPTI_CB_DOMAIN_DRIVER_API
  const char* name;
  Kind kind;
  bool required;  // install fails when CUPTI refuses it; legacy entry points removed in CUDA 13 need not exist
};

#define KERNELRL_DRIVER(fn, kind, required) \
  EntryPoint { CUPTI_DRIVER_TRACE_CBID_##fn, #fn, Kind::kind, required }

// Every driver entry point that runs a kernel or puts one into a graph (cupti_driver_cbid.h of
// CUDA 13.0). The runtime's calls reach these too: on the H200 (driver 580, CUDA 13.0) <<<...>>>
// and cudaLaunchKernelEx from the shared and the static runtime, stream capture, cudaGraphLaunch
// and cudaGraphAddKernelNode from the shared one, and cuBLAS's launches each gave one driver
// callback (tests/audit), so the runtime's own callbacks are not subscribed: they would only add
// their cost to every launch.
// Graph instantiation, cloning, child graphs and cuGraphExecUpdate only rearrange nodes that were
// judged when they were made.
constexpr std::array kEntryPoints = {
    KERNELRL_DRIVER(cuLaunchKernel, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchKernel_ptsz, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchKernelEx, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchKernelEx_ptsz, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchCooperativeKernel, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchCooperativeKernel_ptsz, LAUNCH, true),
    KERNELRL_DRIVER(cuLaunchCooperativeKernelMultiDevice, LAUNCH, false),
    KERNELRL_DRIVER(cuLaunch, LAUNCH, false),
    KERNELRL_DRIVER(cuLaunchGrid, LAUNCH, false),
    KERNELRL_DRIVER(cuLaunchGridAsync, LAUNCH, false),
    KERNELRL_DRIVER(cuGraphLaunch, GRAPH_LAUNCH, true),
    KERNELRL_DRIVER(cuGraphLaunch_ptsz, GRAPH_LAUNCH, true),
    KERNELRL_DRIVER(cuGraphAddKernelNode, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphAddKernelNode_v2, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphKernelNodeSetParams, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphKernelNodeSetParams_v2, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphExecKernelNodeSetParams, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphExecKernelNodeSetParams_v2, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphAddNode, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphAddNode_v2, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphNodeSetParams, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuGraphExecNodeSetParams, GRAPH_NODE, true),
    KERNELRL_DRIVER(cuDriverGetVersion, HEARTBEAT, true),
};

#undef KERNELRL_DRIVER

constexpr std::size_t kNoEntry = kEntryPoints.size();
static_assert(kEntryPoints.size() < 255, "entry indices are stored in bytes");

// cbid -> index into kEntryPoints (kNoEntry for the rest), so the callback finds its entry point
// with one load whatever it was called for.
constexpr auto kEntryOfCbid = [] {
  std::array<std::uint8_t, CUPTI_DRIVER_TRACE_CBID_SIZE> table{};
  table.fill(static_cast<std::uint8_t>(kNoEntry));
  for (std::size_t i = 0; i < kEntryPoints.size(); ++i) table[kEntryPoints[i].cbid] = static_cast<std::uint8_t>(i);
  return table;
}();

std::size_t entry_index(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid >= kEntryOfCbid.size()) return kNoEntry;
  return kEntryOfCbid[cbid];
}

// One kernel met at an entry point, as its parameters describe it.
struct KernelUse {
  std::size_t entry = 0;
  const char* symbol_name = nullptr;  // CUPTI's name of the kernel (launch callbacks only), may be null
  CUfunction function = nullptr;      // may be a CUkernel cast to CUfunction (allowed since CUDA 12)
  CUkernel kernel = nullptr;          // a node's CUkernel when it has no CUfunction
  bool on_stream = false;             // a launch whose stream is known
  CUstream stream = nullptr;
  bool per_thread = false;  // a _ptsz entry: stream 0 is the per-thread default stream
};

thread_local bool t_heartbeat = false;  // this thread runs end_call's own cuDriverGetVersion
// This thread's launch of an own kernel during a call, whose return value the exit callback of
// the same correlation id reads: judge() says it saw one, on_callback keeps the id.
thread_local bool t_judged_own_launch = false;
thread_local std::optional<std::uint32_t> t_own_launch_pending;

}  // namespace

struct LaunchAudit::State {
  const CudaDriver* driver = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<std::string> own_names;        // storage behind `own`
  std::unordered_set<std::string_view> own;  // looked up without allocating on the launch path
  InsideAllowedOp inside_allowed_op;
  std::array<bool, kEntryPoints.size()> enabled{};

  std::atomic<bool> in_call{false};
  std::atomic<CUstream> given_stream{CU_STREAM_LEGACY};
  std::atomic<std::int64_t> n_kernels{0};
  std::atomic<std::int64_t> n_own{0};
  std::atomic<std::int64_t> n_own_failed{0};
  std::atomic<std::int64_t> n_inside_allowed_ops{0};
  std::atomic<std::int64_t> n_graph_kernels{0};
  std::atomic<std::int64_t> n_graph_launches{0};
  std::atomic<std::int64_t> n_other_stream_launches{0};
  std::array<std::atomic<std::int64_t>, kEntryPoints.size()> by_entry{};
  std::atomic<std::int64_t> heartbeats{0};
  std::atomic<bool> record_failed{false};

  std::mutex mutex;  // guards the foreign record and the opening and closing of a call
  std::int64_t n_foreign = 0;
  std::int64_t n_foreign_between_calls = 0;
  std::int64_t n_foreign_since_install = 0;
  std::vector<std::string> foreign_names;
};

namespace {

using State = LaunchAudit::State;

CUstream effective_stream(CUstream stream, bool per_thread) {
  if (stream != nullptr) return stream;
  return per_thread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
}

bool is_capturing(const State& s, CUstream stream) {
  // The legacy stream cannot capture, and asking about it while another stream captures is an error.
  if (stream == CU_STREAM_LEGACY) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (s.driver->stream_is_capturing(stream, &status) != CUDA_SUCCESS) return false;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

const char* driver_kernel_name(const CudaDriver& d, CUfunction function, CUkernel kernel) {
  const char* name = nullptr;
  if (function != nullptr) {
    if (d.func_get_name(&name, function) == CUDA_SUCCESS && name != nullptr) return name;
    kernel = reinterpret_cast<CUkernel>(function);
  }
  if (kernel != nullptr && d.kernel_get_name(&name, kernel) == CUDA_SUCCESS && name != nullptr) return name;
  return nullptr;
}

bool inside_allowed_op(const State& s) {
  if (!s.inside_allowed_op) return false;
  try {
    return s.inside_allowed_op();
  } catch (...) {
    return false;
  }
}

void note_foreign(State& s, const char* name) {
  std::lock_guard lock(s.mutex);
  ++s.n_foreign_since_install;
  if (s.in_call.load(std::memory_order_relaxed)) {
    ++s.n_foreign;
  } else {
    ++s.n_foreign_between_calls;
  }
  if (s.foreign_names.size() < kMaxForeignNames &&
      std::find(s.foreign_names.begin(), s.foreign_names.end(), name) == s.foreign_names.end()) {
    s.foreign_names.emplace_back(name);
  }
}

// Judges one kernel at the moment it is launched, captured or put into a graph.
void judge(State& s, const KernelUse& use, bool into_graph) {
  const bool in_call = s.in_call.load(std::memory_order_relaxed);
  bool captured = into_graph;
  if (use.on_stream) {
    const CUstream stream = effective_stream(use.stream, use.per_thread);
    captured = is_capturing(s, stream);
    if (in_call && !captured && stream != s.given_stream.load(std::memory_order_relaxed)) {
      s.n_other_stream_launches.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // CUPTI's symbol name when it gives one (launches): the mangled name, as cuKernelGetName gives it
  // (tests/audit checks both), at no cost; asking the driver costs about a microsecond.
  const char* name =
      use.symbol_name != nullptr ? use.symbol_name : driver_kernel_name(*s.driver, use.function, use.kernel);
  const bool own = name != nullptr && s.own.contains(name);
  if (in_call) {
    s.n_kernels.fetch_add(1, std::memory_order_relaxed);
    s.by_entry[use.entry].fetch_add(1, std::memory_order_relaxed);
    if (captured) s.n_graph_kernels.fetch_add(1, std::memory_order_relaxed);
  }
  if (own) {
    if (in_call) s.n_own.fetch_add(1, std::memory_order_relaxed);
    if (in_call && use.on_stream && !captured) t_judged_own_launch = true;
  } else if (inside_allowed_op(s)) {
    if (in_call) s.n_inside_allowed_ops.fetch_add(1, std::memory_order_relaxed);
  } else {
    note_foreign(s, name != nullptr ? name : kUnnamedKernel);
  }
}

void note_graph_launch(State& s, std::size_t entry, CUstream stream, bool per_thread) {
  if (!s.in_call.load(std::memory_order_relaxed)) return;
  s.n_graph_launches.fetch_add(1, std::memory_order_relaxed);
  s.by_entry[entry].fetch_add(1, std::memory_order_relaxed);
  const CUstream effective = effective_stream(stream, per_thread);
  if (!is_capturing(s, effective) && effective != s.given_stream.load(std::memory_order_relaxed)) {
    s.n_other_stream_launches.fetch_add(1, std::memory_order_relaxed);
  }
}

template <typename NodeParams>
void judge_node(State& s, std::size_t entry, const NodeParams* params) {
  if (params == nullptr) return;
  KernelUse use{.entry = entry, .function = params->func};
  if constexpr (requires { params->kern; }) use.kernel = params->kern;
  judge(s, use, /*into_graph=*/true);
}

void judge_generic_node(State& s, std::size_t entry, const CUgraphNodeParams* params) {
  if (params == nullptr || params->type != CU_GRAPH_NODE_TYPE_KERNEL) return;
  judge_node(s, entry, &params->kernel);
}

template <typename Params>
KernelUse stream_launch(std::size_t entry, const CUpti_CallbackData* info, const Params* p, bool per_thread) {
  return KernelUse{.entry = entry,
                   .symbol_name = info->symbolName,
                   .function = p->f,
                   .on_stream = true,
                   .stream = p->hStream,
                   .per_thread = per_thread};
}

void on_driver_enter(State& s, std::size_t entry, CUpti_CallbackId cbid, const CUpti_CallbackData* info) {
  const void* params = info->functionParams;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return judge(s, stream_launch(entry, info, static_cast<const cuLaunchKernel_params*>(params), false), false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return judge(s, stream_launch(entry, info, static_cast<const cuLaunchKernel_ptsz_params*>(params), true), false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return judge(s, stream_launch(entry, info, static_cast<const cuLaunchCooperativeKernel_params*>(params), false),
                   false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return judge(s,
                   stream_launch(entry, info, static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params), true),
                   false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
      return judge(s, stream_launch(entry, info, static_cast<const cuLaunchGridAsync_params*>(params), false), false);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      // The two parameter structs are the same; only the meaning of stream 0 differs.
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      return judge(s,
                   KernelUse{.entry = entry,
                             .symbol_name = info->symbolName,
                             .function = p->f,
                             .on_stream = true,
                             .stream = p->config != nullptr ? p->config->hStream : nullptr,
                             .per_thread = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
                   false);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid: {
      // The first member of both is the function; both launch on the legacy stream.
      const auto* p = static_cast<const cuLaunch_params*>(params);
      return judge(s, KernelUse{.entry = entry, .symbol_name = info->symbolName, .function = p->f, .on_stream = true},
                   false);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice: {
      const auto* p = static_cast<const cuLaunchCooperativeKernelMultiDevice_params*>(params);
      for (unsigned int i = 0; p->launchParamsList != nullptr && i < p->numDevices; ++i) {
        const CUDA_LAUNCH_PARAMS& l = p->launchParamsList[i];
        judge(s, KernelUse{.entry = entry, .function = l.function, .on_stream = true, .stream = l.hStream}, false);
      }
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: {
      const auto* p = static_cast<const cuGraphLaunch_params*>(params);
      return note_graph_launch(s, entry, p->hStream, false);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: {
      const auto* p = static_cast<const cuGraphLaunch_ptsz_params*>(params);
      return note_graph_launch(s, entry, p->hStream, true);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode:
      return judge_node(s, entry, static_cast<const cuGraphAddKernelNode_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2:
      return judge_node(s, entry, static_cast<const cuGraphAddKernelNode_v2_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetParams:
      return judge_node(s, entry, static_cast<const cuGraphKernelNodeSetParams_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphKernelNodeSetParams_v2:
      return judge_node(s, entry, static_cast<const cuGraphKernelNodeSetParams_v2_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams:
      return judge_node(s, entry, static_cast<const cuGraphExecKernelNodeSetParams_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2:
      return judge_node(s, entry, static_cast<const cuGraphExecKernelNodeSetParams_v2_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode:
      return judge_generic_node(s, entry, static_cast<const cuGraphAddNode_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2:
      return judge_generic_node(s, entry, static_cast<const cuGraphAddNode_v2_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetParams:
      return judge_generic_node(s, entry, static_cast<const cuGraphNodeSetParams_params*>(params)->nodeParams);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
      return judge_generic_node(s, entry, static_cast<const cuGraphExecNodeSetParams_params*>(params)->nodeParams);
    default:
      return;
  }
}

// The driver's answer to an own kernel's launch: an error means the kernel never ran (the
// fallback of a try/except may run instead), so the call's own launches did not all happen.
void on_own_launch_exit(State& s, const CUpti_CallbackData* info) {
  t_own_launch_pending.reset();
  const auto* returned = static_cast<const CUresult*>(info->functionReturnValue);
  if (returned != nullptr && *returned != CUDA_SUCCESS && s.in_call.load(std::memory_order_relaxed)) {
    s.n_own_failed.fetch_add(1, std::memory_order_relaxed);
  }
}

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const std::size_t entry = entry_index(domain, cbid);
  if (entry == kNoEntry) return;
  auto& s = *static_cast<State*>(userdata);
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_EXIT) {
    if (t_own_launch_pending == info->correlationId) on_own_launch_exit(s, info);
    return;
  }
  if (info->callbackSite != CUPTI_API_ENTER) return;
  try {
    if (kEntryPoints[entry].kind == Kind::HEARTBEAT) {
      if (t_heartbeat) s.heartbeats.fetch_add(1);
    } else {
      t_judged_own_launch = false;
      on_driver_enter(s, entry, cbid, info);
      t_own_launch_pending.reset();
      if (t_judged_own_launch) t_own_launch_pending = info->correlationId;
    }
  } catch (...) {
    // Nothing may unwind into the driver; a kernel that could not be recorded spoils the audit.
    s.record_failed.store(true);
  }
}

std::string cupti_error(const char* call, CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUptiResult";
  return std::string(call) + " failed: " + text + " (" + std::to_string(static_cast<int>(r)) + ")";
}

// Whether every enabled callback is still enabled and still arrives: someone in the process may
// have finalized CUPTI, unsubscribed this audit or switched its callbacks off.
bool callbacks_alive(State& s) {
  for (std::size_t i = 0; i < kEntryPoints.size(); ++i) {
    if (!s.enabled[i]) continue;
    std::uint32_t on = 0;
    if (cuptiGetCallbackState(&on, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kEntryPoints[i].cbid) != CUPTI_SUCCESS ||
        on == 0) {
      return false;
    }
  }
  const std::int64_t before = s.heartbeats.load();
  int version = 0;
  t_heartbeat = true;
  const CUresult r = s.driver->driver_get_version(&version);
  t_heartbeat = false;
  return r == CUDA_SUCCESS && s.heartbeats.load() > before;
}

}  // namespace

LaunchAudit::LaunchAudit() : state_(std::make_unique<State>()) {}

LaunchAudit::~LaunchAudit() {
  if (state_->subscriber != nullptr) cuptiUnsubscribe(state_->subscriber);
}

common::Fallible LaunchAudit::install(std::vector<std::string> own_kernel_names, InsideAllowedOp inside_allowed_op) {
  State& s = *state_;
  if (s.subscriber != nullptr) return common::make_error("the launch audit is already installed");
  auto driver = cuda_driver();
  if (!driver) return driver.error();
  s.driver = *driver;
  s.own_names = std::move(own_kernel_names);
  s.own.clear();
  for (const auto& name : s.own_names) s.own.insert(name);
  s.inside_allowed_op = std::move(inside_allowed_op);

  char previous[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "kernelrl launch audit";
  params.oldSubscriberName = previous;
  params.oldSubscriberSize = sizeof previous - 1;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (const CUptiResult r = cuptiSubscribe_v2(&subscriber, &on_callback, &s, &params); r != CUPTI_SUCCESS) {
    std::string message = cupti_error("cuptiSubscribe_v2", r);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      message += ": CUPTI already has a subscriber (" + std::string(previous[0] != '\0' ? previous : "unnamed") +
                 "; a profiler, a debugger or a second launch audit)";
    }
    return common::make_error(message);
  }
  for (std::size_t i = 0; i < kEntryPoints.size(); ++i) {
    const EntryPoint& e = kEntryPoints[i];
    const CUptiResult r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, e.cbid);
    s.enabled[i] = r == CUPTI_SUCCESS;
    if (r != CUPTI_SUCCESS && e.required) {
      cuptiUnsubscribe(subscriber);
      return common::make_error(cupti_error("cuptiEnableCallback", r) + " for " + e.name);
    }
  }
  s.subscriber = subscriber;
  return common::Ok{};
}

void LaunchAudit::begin_call(void* given_stream) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.given_stream.store(given_stream != nullptr ? static_cast<CUstream>(given_stream) : CU_STREAM_LEGACY);
  for (auto* counter : {&s.n_kernels, &s.n_own, &s.n_own_failed, &s.n_inside_allowed_ops, &s.n_graph_kernels, &s.n_graph_launches,
                        &s.n_other_stream_launches}) {
    counter->store(0);
  }
  for (auto& counter : s.by_entry) counter.store(0);
  s.n_foreign = 0;
  s.in_call.store(true);
}

CallLaunches LaunchAudit::end_call() {
  State& s = *state_;
  CallLaunches r;
  // Checked before the call closes, so a switch-off during the call is still seen by this one.
  r.audit_intact = s.subscriber != nullptr && callbacks_alive(s) && !s.record_failed.load();
  {
    std::lock_guard lock(s.mutex);
    s.in_call.store(false);
    r.n_foreign = std::exchange(s.n_foreign, 0);
    r.n_foreign_between_calls = std::exchange(s.n_foreign_between_calls, 0);
    r.n_foreign_since_install = s.n_foreign_since_install;
    r.foreign_kernels = std::exchange(s.foreign_names, {});
  }
  r.n_kernels = s.n_kernels.exchange(0);
  r.n_own = s.n_own.exchange(0);
  r.n_own_failed = s.n_own_failed.exchange(0);
  r.n_inside_allowed_ops = s.n_inside_allowed_ops.exchange(0);
  r.n_graph_kernels = s.n_graph_kernels.exchange(0);
  r.n_graph_launches = s.n_graph_launches.exchange(0);
  r.n_other_stream_launches = s.n_other_stream_launches.exchange(0);
  for (std::size_t i = 0; i < kEntryPoints.size(); ++i) {
    if (const std::int64_t n = s.by_entry[i].exchange(0); n > 0) r.by_entry_point.emplace_back(kEntryPoints[i].name, n);
  }
  return r;
}

nlohmann::json to_json(const CallLaunches& launches) {
  nlohmann::json by_entry = nlohmann::json::object();
  for (const auto& [name, n] : launches.by_entry_point) by_entry[name] = n;
  return {
      {"n_kernels", launches.n_kernels},
      {"n_own", launches.n_own},
      {"n_own_failed", launches.n_own_failed},
      {"n_inside_allowed_ops", launches.n_inside_allowed_ops},
      {"n_foreign", launches.n_foreign},
      {"n_graph_kernels", launches.n_graph_kernels},
      {"n_graph_launches", launches.n_graph_launches},
      {"n_other_stream_launches", launches.n_other_stream_launches},
      {"n_foreign_between_calls", launches.n_foreign_between_calls},
      {"n_foreign_since_install", launches.n_foreign_since_install},
      {"foreign_kernels", launches.foreign_kernels},
      {"by_entry_point", by_entry},
      {"audit_intact", launches.audit_intact},
  };
}

}  // namespace kernelrl::audit
