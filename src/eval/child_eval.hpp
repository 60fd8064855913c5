// The evaluation procedure that runs inside a freshly forked child: the only process that touches
// CUDA and the candidate's code. It reports each phase it enters and, last, one JSON record over
// `report_fd`; the worker enforces the phase time limits and survives whatever happens here.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.hpp"
#include "eval/options.hpp"
#include "eval/result.hpp"
#include "task/task.hpp"

namespace kernelrl::eval {

struct ChildRequest {
  std::string op = "eval";         // "eval", "task_info" (signature and reference time) or "device_info"
  std::string artifact;            // compiled artifact of the candidate (eval)
  std::string candidate;           // the candidate's file, for messages
  common::Format format = common::Format::NATIVE;
  common::RuleSet rules = common::RuleSet::STRICT;  // kernelbench: which rules judge it (common/status.hpp)
  EvalOptions options;
  std::string device = "cpu";      // resolved: "cuda" or "cpu"
  std::optional<TimingSummary> cached_ref;  // the reference's timing measured earlier in this run
};

void to_json(nlohmann::json& j, const ChildRequest& r);
void from_json(const nlohmann::json& j, ChildRequest& r);

// Runs the request and writes lines to report_fd: {"phase": NAME} when a phase starts, then one
// final {"result": EvalResult, "signature": ..., "ref_timing": ...}, {"task_error": TEXT} when the
// task itself is at fault, or {"device_info": ...}. `task` may be null for device_info.
// `request_fd`: the worker's grants of each phase (sandbox::wait_for_grant); -1 for none.
// What happened before run_child started, reported among the result's phases.
struct ChildStart {
  double device_wait_ms = 0;     // the request waited for this child's CUDA context ("device_wait")
  double device_prepare_ms = 0;  // creating it took, before the request ("device_prepare"; 0: not ahead)
  double task_load_ms = 0;       // loading the task file in this child ("task_load"; 0: the worker's)
};
void run_child(const task::TaskModule* task, const ChildRequest& request, int report_fd, int request_fd,
               const ChildStart& start = {});

// Work a child can do before it knows its request: on "cuda", create the CUDA context (the
// slowest part of a child's start) and load the engine's check kernels (no kernel runs, so
// another worker's timing is not disturbed). Failures are left for run_child to report.
void prepare_device(const std::string& device);

// For a child forked before its task was known: loads the task file, then run_child().
void run_child_loading_task(const std::string& task_path, const ChildRequest& request, int report_fd,
                            int request_fd, ChildStart start);

}  // namespace kernelrl::eval
