// The evaluating child's side of a candidate in a process of its own (runner/protocol.hpp): a
// Candidate whose calls are requests to the runner (eval/runner_process.hpp). The call's tensors
// live where both processes see them: the shared pages themselves (host and CPU kernelbench
// candidates) or a device arena the runner maps through CUDA IPC (GPU candidates). The child trusts
// nothing the runner says about time: it observes from outside, through the kernel, what the
// runner's process does between requests (its threads, its CPU time), and times calls on its own
// clock less what that clock costs around a call that runs no candidate code, measured before the
// candidate was loaded (calibrate()). Internal to src/eval.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/call_evidence.hpp"
#include "eval/candidate.hpp"
#include "eval/outside_windows.hpp"
#include "runner/protocol.hpp"

namespace kernelrl::eval {

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

// A device arena of `bytes` on this process's device, exported into the header (its device, size
// and CUDA IPC handle) for a GPU runner to map. Throws TaskError when it cannot be made. (An
// interprocess CUDA event cannot be shared the same way with a confined runner: opening one maps a
// shared-memory file the runner may not read; H200, 2026-12-04, cudaErrorMapBufferObjectFailed.)
RunnerMemory device_arena(runner::Header* h, std::size_t bytes);

// What the child refuses of what the runner recorded of a call below Python (audit/).
struct CallRules {
  bool torch_operators = false;  // strict kernelbench rules: no PyTorch operators beyond allocation, views, copies
  bool foreign_kernels = false;  // no kernels but the candidate's own (and those of allowed operators)
};

class RunnerCandidate : public Candidate {
 public:
  // `threads`: how many threads the runner may have when no call runs (read again from its set-up).
  RunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, CallRules rules);
  ~RunnerCandidate() override;

  runner::Header* header() const { return h_; }

  // START (request 1): `text` names what the runner serves. Waits for its set-up report (a JSON
  // object: its confinement), counts its threads (all it may have between calls) and returns the
  // report. Throws TaskError when the runner could not set itself up (no candidate code ran yet).
  nlohmann::json start(const std::string& text);
  // The times of IDLE calls made before the candidate was loaded, timed exactly like its calls will
  // be (eval/candidate_process.hpp): their median is subtracted from each timed call. Returns the
  // calibration's record (median, spread, count).
  nlohmann::json set_idle_calls(const std::vector<double>& times_ms);
  double idle_call_ms() const { return idle_call_ms_; }
  // LOAD: nullopt when the candidate loaded there, else why not (FORMAT_ERROR: no entry point).
  std::optional<LoadOutcome> load();

  // The params go to the shared memory once, ahead of the inputs and outputs.
  common::Fallible place_params(const std::vector<pybind11::object>& params);

  common::Fallible stage(CallArgs& args) override;
  common::Fallible arm() override;
  std::optional<pid_t> process_id() const override { return pid_; }
  common::Fallible idle_call() override;
  CallOutcome call(CallArgs&, void*) override;
  common::Fallible collect(CallArgs&) override;
  bool uses_preallocated_outputs() const override { return true; }
  bool in_another_process() const override { return true; }
  bool in_another_cuda_context() const override { return memory_.cuda_device >= 0; }
  std::optional<std::string> refusal_between_calls() override;
  // What the child saw of the runner between requests: its CPU time there (max, total).
  nlohmann::json outside_calls_record() const;
  // What its calls ran, from the records of those judged so far (eval/call_evidence.hpp).
  const CallEvidence& call_evidence() const { return evidence_; }
  // After the last call: its record asked for, counted and judged like every other call's (a
  // refusal, or nullopt). The time since its answer is the evaluator's own work, not a window
  // between requests: its CPU time is not judged.
  std::optional<std::string> settle_last_record();

 protected:
  enum class Group { PARAMS, INPUTS, OUTPUTS };  // laid out in this order in the data region
  // Sends one request and waits for its answer; ends this process like the runner if it died.
  // `close_window`: the CPU time the runner spent since its last answer is judged (outside_windows).
  void request(runner::Op op, bool close_window = true);
  // RECORD: the last call's record, counted as evidence and judged under the rules.
  std::optional<std::string> ask_record(bool close_window);
  // request(CALL), its record to be asked for (RECORD) and judged at the next check between calls.
  void call_requested();
  // stage(): inputs and outputs placed in the shared memory, the staging settled.
  common::Fallible stage_tensors(std::vector<pybind11::object>& inputs, std::vector<pybind11::object>& outputs);
  common::Fallible place(std::vector<pybind11::object>& values, Group group);
  pybind11::object over(std::byte* at, const pybind11::object& like) const;
  // A CALL's record (the runner's audit text, parsed): a refusal under `rules_`, or nullopt.
  std::optional<std::string> refused_by_record(const nlohmann::json& record) const;

 private:
  // The runner's CPU time in nanoseconds (-1 where it cannot be read: gone): its first thread's (the
  // loop's) and the whole process's. Up to date for threads not on a CPU, and for the loop's, which
  // brings it up to date before each answer (runner::answer).
  struct CpuReading {
    std::int64_t loop_ns = -1;
    std::int64_t process_ns = -1;
  };
  CpuReading read_cpu() const;
  // Ends the window that started at the runner's last answer: once its loop is seen asleep, the CPU
  // time it spent since then is counted (or it is marked still running after kAsleepWithin).
  void close_outside_window();

  sandbox::SharedPages pages_;
  runner::Header* h_;
  pid_t pid_;
  RunnerMemory memory_;
  CallRules rules_;
  CallEvidence evidence_;
  int threads_ = 1;
  std::uint32_t seq_ = 1;
  clockid_t cpu_clock_{};
  bool have_cpu_clock_ = false;
  CpuReading at_reply_;                // when its last answer came; -1s: no window open
  bool still_running_ = false;         // its loop was not asleep kAsleepWithin after an answer
  bool spin_for_reply_ = true;         // a free CPU when the last call was armed: wait for its answer spinning
  bool record_pending_ = false;        // a CALL was answered whose record was not yet asked for
  bool expects_op_record_ = false;     // the runner said it records PyTorch operators (kernelbench)
  bool expects_launch_record_ = false; // the runner said it records GPU launches
  // CPU time between an answer and the next request: the loop's, the whole process's.
  OutsideWindows loop_outside_{kLoopOutside}, process_outside_{kProcessOutside};
  double idle_call_ms_ = 0;
  std::vector<pybind11::object> params_;
  std::vector<runner::TensorSlot> param_slots_, input_slots_, output_slots_;
  std::size_t params_end_ = 0, inputs_end_ = 0;
};

}  // namespace kernelrl::eval
