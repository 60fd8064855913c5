// Which GPU kernels the candidate's process launched, judged below Python on every call: CUPTI
// callbacks on the CUDA driver's launch and graph-building functions (which the CUDA runtime and
// the libraries reach too), installed in the runner before any candidate code is loaded.
// A kernel is "own" when the candidate's libraries define it (own_kernels.hpp), "inside an allowed
// operator" when the operator recorder says the launching thread is inside one (an allocation, a
// copy), and "foreign" otherwise (cuBLAS, PyTorch's compute kernels). Kernels captured into a CUDA
// graph or added to one as nodes are judged then, so a graph's later launch replays only judged
// kernels. CUPTI takes one subscriber per process: once installed, a candidate's own cuptiSubscribe
// fails, and a subscription it finalizes or switches off is noticed at the end of the call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::audit {

// What launched between begin_call and end_call, and the foreign kernels seen since the previous
// call ended (during load, between calls). Counts are of kernels unless named otherwise.
struct CallLaunches {
  std::int64_t n_kernels = 0;                // launched, captured into a graph or added as a graph node
  std::int64_t n_own = 0;                    // of n_kernels: defined in the candidate's libraries
  std::int64_t n_own_failed = 0;             // of n_own: launches the driver refused (an error returned, so
                                             // the kernel never ran: a block too large, too much shared memory)
  std::int64_t n_inside_allowed_ops = 0;     // of n_kernels: not own, launched inside an allowed operator
  std::int64_t n_foreign = 0;                // of n_kernels: neither
  std::int64_t n_graph_kernels = 0;          // of n_kernels: captured or added to a graph (judged then)
  std::int64_t n_graph_launches = 0;         // CUDA graph launches (their kernels were judged before)
  std::int64_t n_other_stream_launches = 0;  // kernel and graph launches, not captured, on a stream other
                                             // than the call's (work the call's stream may not wait for)
  std::int64_t n_foreign_between_calls = 0;  // foreign kernels since the previous call ended
  std::int64_t n_foreign_since_install = 0;  // every foreign kernel this audit has seen
  std::vector<std::string> foreign_kernels;  // names, each once, first 8: this call's and those between calls
  // This call's judged kernels and graph launches per driver function ("cuLaunchKernel"), nonzero only.
  std::vector<std::pair<std::string, std::int64_t>> by_entry_point;
  // False: a kernel may have gone unjudged: CUPTI no longer delivers this audit's callbacks
  // (finalized, unsubscribed or switched off by someone), or one could not be recorded.
  bool audit_intact = true;

  // True when the call (and the time since the previous one) ran nothing but the candidate's own
  // kernels and kernels inside allowed operators, with the audit intact.
  bool only_own_or_allowed() const { return n_foreign == 0 && n_foreign_between_calls == 0 && audit_intact; }
};

// The record's "launch_audit" object: the counts, the foreign names, by_entry_point, audit_intact.
nlohmann::json to_json(const CallLaunches& launches);

class LaunchAudit {
 public:
  // Whether the calling thread is inside an operator the rules allow. Called on the launching
  // thread, inside the CUDA call, only for kernels that are not the candidate's own: it must be
  // cheap, must not call CUDA, and should not throw (a throw counts as false).
  using InsideAllowedOp = std::function<bool()>;

  LaunchAudit();
  // Unsubscribes. Destroy it only when no other thread may be launching kernels.
  ~LaunchAudit();
  LaunchAudit(const LaunchAudit&) = delete;
  LaunchAudit& operator=(const LaunchAudit&) = delete;

  // Subscribes to CUPTI's callbacks on every kernel-launch and graph-building entry point and starts
  // judging launches; no call is open until begin_call. Call once, on the runner's thread, before any
  // candidate code is loaded (the driver need not be initialised yet). An Error names what failed:
  // no CUDA driver, CUPTI already has a subscriber (another tool, another LaunchAudit), a callback
  // that cannot be enabled, or a second install.
  common::Fallible install(std::vector<std::string> own_kernel_names, InsideAllowedOp inside_allowed_op = {});

  // Opens a call: launches until end_call count for it. `given_stream` is the CUstream (cudaStream_t)
  // the call was given; nullptr means the legacy default stream. Runner's thread; after install.
  void begin_call(void* given_stream);

  // Closes the call: its counts, the foreign kernels since the previous call ended, and whether the
  // callbacks still arrive (checked by a driver call of this thread that the audit must see).
  // Runner's thread. Launches on other threads may race with it: a foreign kernel is then reported
  // by this call or by the next, never by neither.
  CallLaunches end_call();

  struct State;  // the callbacks' shared state (launch_audit.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace kernelrl::audit
