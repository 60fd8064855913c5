// The messages between the engine, a worker and its evaluating children, typed, each with its JSON
// (one line each on the worker's pipes and the child's report channel):
//   engine -> worker   WorkerRequest  {"task": PATH, "child": ChildRequest}   (+ "id", WorkerClient's)
//   worker -> child    the same, plus "handed_at_ns", to a child forked ahead of its request
//   child  -> worker   phase lines (eval/phases.hpp), then one ChildRecord
//   worker -> engine   WorkerReply    {"record": ChildRecord, "outcome": ChildEnd} or {"error": TEXT}
// The phases themselves, their limits and device lock modes are eval/phases.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "eval/options.hpp"
#include "eval/result.hpp"
#include "task/signature.hpp"

namespace kernelrl::eval {

// What a child is asked to do: evaluate a candidate, describe the task (signature, health and the
// eager reference time: `kernelrl tasks show/check`) or describe the device.
enum class ChildOp { EVAL, TASK_INFO, DEVICE_INFO };
std::string to_string(ChildOp op);                           // "eval", "task_info", "device_info"
std::optional<ChildOp> parse_child_op(const std::string& name);

struct ChildRequest {
  ChildOp op = ChildOp::EVAL;
  std::string artifact;            // compiled artifact of the candidate (eval)
  std::string candidate;           // the candidate's file, for messages
  common::Format format = common::Format::NATIVE;
  common::RuleSet rules = common::RuleSet::STRICT;  // kernelbench: which rules judge it (common/status.hpp)
  EvalOptions options;
  std::string device = "cpu";      // resolved: "cuda" or "cpu"
  std::optional<TimingSummary> cached_ref;  // the reference's timing measured earlier in this run
  bool confine_task = false;       // the task's code is not trusted (EngineConfig::untrusted_task_folders):
                                   // loaded only in a fresh child, after its files are confined
};

void to_json(nlohmann::json& j, const ChildRequest& r);
void from_json(const nlohmann::json& j, ChildRequest& r);

// The rules that judge the request's outputs: its `rules` for a kernelbench candidate, the strict
// ones for native and host candidates (KernelBench has no rules of its own for those).
inline common::RuleSet judging_rules(const ChildRequest& r) {
  return r.format == common::Format::KERNELBENCH ? r.rules : common::RuleSet::STRICT;
}

// One request to a worker; `task` is empty for DEVICE_INFO.
struct WorkerRequest {
  std::string task;                       // absolute path of the task file
  ChildRequest child;
  std::optional<std::int64_t> handed_at_ns;  // to a warm child only: when the worker handed it over
                                             // (steady clock), to measure the wait for its device
  std::string report_key;  // to a warm child only: the key it signs its report lines with
                           // (common/report_mac.hpp), drawn by the worker for this evaluation
};

void to_json(nlohmann::json& j, const WorkerRequest& r);
void from_json(const nlohmann::json& j, WorkerRequest& r);

// A child's last line: exactly one of task_error, device_info or result (with its companions).
struct ChildRecord {
  std::optional<std::string> task_error;       // the task or the machine is at fault: "could not evaluate"
  std::optional<nlohmann::json> device_info;   // DEVICE_INFO: cuda_available, torch, name, compute_capability, ...
  std::optional<EvalResult> result;            // EVAL and TASK_INFO
  std::optional<task::Signature> signature;    // EVAL and TASK_INFO: the task's, as setup found it
  std::optional<TimingSummary> ref_timing;     // EVAL: the reference's time, from a clean evaluation only
  std::optional<nlohmann::json> health;        // TASK_INFO: input_bytes, per-output statistics, problems
};

nlohmann::json to_json(const ChildRecord& r);
// The record of a child's final line; an Error when it is none of the three kinds.
common::Expected<ChildRecord> parse_child_record(const nlohmann::json& j);

// How a child ended, as the worker saw it (sandbox::ChildOutcome, plus the device lock's wait).
struct ChildEnd {
  bool has_record = false;
  std::string last_phase;      // the phase it was in when it ended (sandbox::kStartPhase: none yet)
  bool timed_out = false;
  double phase_limit_s = 0;    // the limit that ran out, when timed_out
  int exit_code = -1;
  int term_signal = 0;
  std::string end;             // sandbox::describe_end: "killed by signal 11 (SIGSEGV)", ...
  std::string stderr_tail;
  double wall_ms = 0;          // the child's whole life, as the worker watched it
  double lock_wait_ms = 0;     // held at phase boundaries for the device lock (inside wall_ms)
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ChildEnd, has_record, last_phase, timed_out, phase_limit_s,
                                                exit_code, term_signal, end, stderr_tail, wall_ms, lock_wait_ms)

// A worker's answer to one WorkerRequest: `error` when it could not run a child for it (a task
// file it cannot load, no process), else how the child ended and its record, if it wrote one.
struct WorkerReply {
  std::optional<std::string> error;
  std::optional<nlohmann::json> record;  // the child's final line, passed on unread (parse_child_record)
  ChildEnd outcome;
};

void to_json(nlohmann::json& j, const WorkerReply& r);
// An Error when the worker sent none of an error, an outcome.
common::Expected<WorkerReply> parse_worker_reply(const nlohmann::json& j);

// True when an error text says a CUDA allocation found the device's memory exhausted (the runtime's
// "out of memory", torch's OutOfMemoryError) or a CUDA context could not be made on it
// (cudaErrorDevicesUnavailable, "busy or unavailable": what creating a context reads when the
// memory it needs is held): on a GPU shared by several evaluations, possibly another one's
// candidate holding it, so not this evaluation's verdict (Engine::run_in_worker).
bool says_device_memory_ran_out(std::string_view message);

// True when a result is a RUNTIME_ERROR whose evaluating child found the device full outside the
// candidate's calls (`isolation.device_memory_short`); false for any other, one without isolation too.
bool found_device_memory_short(const EvalResult& r);

}  // namespace kernelrl::eval
