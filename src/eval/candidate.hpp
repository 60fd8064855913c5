// A loaded candidate the evaluating child can call: a native/host shared object with the
// kernelrl_forward entry point, or a kernelbench ModelNew instance.
#pragma once

#include <sys/types.h>

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "eval/torch_tensors.hpp"

namespace kernelrl::eval {

// Why one call failed.
struct CallFailure {
  std::string message;
  bool rule_broken = false;  // it broke a rule of the evaluation (REJECTED), not merely failed (RUNTIME_ERROR)
};

// What one call did.
struct CallOutcome {
  std::optional<CallFailure> failure;     // nullopt: the call returned normally
  std::vector<pybind11::object> outputs;  // kernelbench: the returned tensors; native/host: empty
};

// The tensors of one call: the task's inputs, the reference parameters and the preallocated
// outputs, with their ABI views built once.
struct CallArgs {
  std::vector<pybind11::object> inputs;
  std::vector<pybind11::object> outputs;
  ViewSet input_views;
  ViewSet output_views;
};

class Candidate {
 public:
  virtual ~Candidate() = default;
  // Calls the candidate once; `stream` is the cudaStream_t (null on the CPU).
  virtual CallOutcome call(CallArgs& args, void* stream) = 0;
  // True when outputs are preallocated by the evaluator (native, host).
  virtual bool uses_preallocated_outputs() const = 0;
  // A candidate in a process of its own (eval/runner_candidate.hpp) sees a call's tensors in pages it
  // shares with the evaluator: stage() puts the inputs and the (poisoned) outputs there before
  // every call, outside any timed region, replacing the tensors in `args` by ones over those
  // pages; collect() brings back, before the call is judged, what the call changed that `args`
  // does not show (the params). An Error when that cannot be done. In process: nothing to do.
  virtual common::Fallible stage(CallArgs&) { return common::Ok{}; }
  virtual common::Fallible collect(CallArgs&) { return common::Ok{}; }
  // The last step before a timed call's clock starts, after the timer's own cache flush (a
  // candidate in a process of its own: the count of its process's CPU time between requests is
  // brought up to date here, outside the clock).
  virtual common::Fallible arm() { return common::Ok{}; }
  // True when the candidate runs in a process of its own (eval/runner_candidate.hpp): its calls
  // are requests to that process, timed on this process's clock less what the clock costs around a
  // call that runs no candidate code (idle_call(), armed and timed like a call), measured before
  // the candidate was loaded (eval/child_calibration.cpp).
  virtual bool in_another_process() const { return false; }
  // True when its GPU work runs in a CUDA context other than the evaluator's: events of the
  // evaluator's context around it would time the GPU's switch between contexts, so its calls are
  // timed on the host clock (eval/timing.hpp).
  virtual bool in_another_cuda_context() const { return false; }
  // The candidate's own process, when it runs in one: its threads' waits for a CPU belong to its
  // timed calls (CallTimer::measure_cpu_wait).
  virtual std::optional<pid_t> process_id() const { return std::nullopt; }
  virtual common::Fallible idle_call() { return common::Ok{}; }
  // Why the candidate broke a rule of the evaluation outside its calls (a thread of its own still
  // running when no call is, ...), or nullopt: asked before every call and before every call is judged.
  virtual std::optional<std::string> refusal_between_calls() { return std::nullopt; }
};

struct LoadOutcome {
  std::unique_ptr<Candidate> candidate;
  common::Status status = common::Status::OK;  // FORMAT_ERROR or RUNTIME_ERROR when loading failed
  std::string error;
};

// dlopen()s a native or host artifact and resolves kernelrl_forward; `params` are the reference
// model's state_dict tensors (already on the device).
LoadOutcome load_shared_object(const std::string& artifact, const std::vector<pybind11::object>& params);

// Before the syscall filter: makes torch's load_inline and load only load extensions the prebuild
// built in the folder load_kernelbench points torch at (importing torch.utils.cpp_extension may
// itself start processes, e.g. to find nvcc). Needs no candidate: a runner does it ahead.
common::Fallible prepare_kernelbench_loading();

// Imports a kernelbench candidate (after prepare_kernelbench_loading) and builds
// ModelNew(*init_inputs) on `device` after seeding with `init_seed`, cast to `precision` (a torch
// dtype, or None) as the reference is. Starts no process, so it runs under the syscall filter.
LoadOutcome load_kernelbench(const std::string& entry_dir, const std::string& display_name,
                             const pybind11::object& init_inputs, const pybind11::object& device,
                             const pybind11::object& precision, std::uint64_t init_seed);

}  // namespace kernelrl::eval
