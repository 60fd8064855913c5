// The evaluating child's side of a candidate in a process of its own (runner/protocol.hpp): a
// Candidate whose calls are requests to the runner. The call's tensors live where both processes
// see them: the shared pages themselves (host candidates, eval/host_runner.hpp) or a device arena
// the runner maps through CUDA IPC (native and kernelbench candidates, eval/runner_ahead.hpp).
// Internal to src/eval.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/candidate.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::eval {

struct RunnerOptions {
  // Bounds the bytes of one call's tensors (inputs, params and outputs, each rounded up to the
  // slot alignment): a call that needs more fails with a message naming the bound.
  std::size_t tensor_bytes = 0;
  // ARM evicts the runner's caches before each timed call (a host runner its core's private caches,
  // a GPU runner the L2 from its own context), after the child's timer flushed its own
  // (EvalOptions::flush_l2).
  bool flush_caches = true;
};

struct RunnerStart {
  LoadOutcome loaded;        // a Candidate that calls into the runner, or why there is none
  nlohmann::json isolation;  // the runner's own layers, as it reported them
};

// Where the call's tensors live in this process.
struct RunnerMemory {
  std::byte* data = nullptr;  // slot offsets count from here
  std::size_t bytes = 0;
  int cuda_device = -1;  // >= 0: device memory of that device; -1: host memory
  // After the child staged a call's tensors and before the runner may read them (device: the
  // child's copies finished); empty when nothing is needed.
  std::function<common::Fallible()> settle_staging;
  std::shared_ptr<void> owner;  // keeps the memory alive as long as the candidate (a device arena)
};

// A device arena of `bytes` on this process's device, exported into the header (its device, size and
// CUDA IPC handle) for a GPU runner to map. Throws TaskError when it cannot be made.
RunnerMemory device_arena(runner::Header* h, std::size_t bytes);

class RunnerCandidate : public Candidate {
 public:
  // `threads`: how many threads the runner has when no call runs (1 for a forked host runner; a GPU
  // runner also keeps the CUDA driver's, counted after its set-up).
  RunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, bool flush_caches, int threads);
  ~RunnerCandidate() override;

  runner::Header* header() const { return h_; }
  void set_threads(int threads) { threads_ = threads; }

  // START for a runner forked ahead (request 1, answered by its set-up report): `text` names what it
  // serves. Throws TaskError when the text does not fit the header.
  void start(const std::string& text);
  // Sends one request and waits for its answer; ends this process like the runner if it died.
  void request(runner::Op op, std::chrono::microseconds spin);
  // Waits for the answer to the last request (the runner's first, unasked, is its report).
  void wait_for_reply(std::chrono::microseconds spin);
  // Waits for that first answer and reads its text as the runner's confinement report (a JSON
  // object; one saying so when the text is not one).
  nlohmann::json read_report();
  // The same for a runner that sets up a device or an interpreter first (throws TaskError when that
  // failed: no candidate code ran yet), then counts its threads: all it may have between calls.
  nlohmann::json read_set_up_report();
  // LOAD: nullopt when the candidate loaded there, else why not (FORMAT_ERROR: no entry point).
  std::optional<LoadOutcome> load();

  // The params go to the shared memory once, ahead of the inputs and outputs.
  common::Fallible place_params(const std::vector<pybind11::object>& params);

  common::Fallible stage(CallArgs& args) override;
  common::Fallible arm() override;
  common::Fallible idle_call() override;
  CallOutcome call(CallArgs&, void*) override;
  common::Fallible collect(CallArgs&) override;
  bool uses_preallocated_outputs() const override { return true; }
  bool in_another_cuda_context() const override { return memory_.cuda_device >= 0; }
  std::optional<std::string> refusal_between_calls() override;

 protected:
  enum class Group { PARAMS, INPUTS, OUTPUTS };  // laid out in this order in the data region
  // stage(): inputs and outputs placed in the shared memory, the staging settled.
  common::Fallible stage_tensors(std::vector<pybind11::object>& inputs, std::vector<pybind11::object>& outputs);
  common::Fallible place(std::vector<pybind11::object>& values, Group group);
  pybind11::object over(std::byte* at, const pybind11::object& like) const;

 private:

  sandbox::SharedPages pages_;
  runner::Header* h_;
  pid_t pid_;
  RunnerMemory memory_;
  int threads_;
  std::uint32_t seq_ = 1;
  std::vector<pybind11::object> params_;
  std::vector<runner::TensorSlot> param_slots_, input_slots_, output_slots_;
  std::size_t params_end_ = 0, inputs_end_ = 0;
};

}  // namespace kernelrl::eval
