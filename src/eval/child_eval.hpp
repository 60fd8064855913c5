// The evaluation procedure that runs inside a freshly forked child: the only process that touches
// CUDA and the candidate's code. It reports each phase it enters (eval/phases.hpp) and, last, one
// ChildRecord (eval/protocol.hpp) over `report_fd`; the worker enforces the phase time limits and
// survives whatever happens here. The phases themselves are child_phases.hpp; run_child decides.
#pragma once

#include <string>

#include "eval/protocol.hpp"
#include "task/task.hpp"

namespace kernelrl::eval {

// What happened before run_child started, reported among the result's phases.
struct ChildStart {
  double device_wait_ms = 0;     // the request waited for this child's CUDA context ("device_wait")
  double device_prepare_ms = 0;  // creating it took, before the request ("device_prepare"; 0: not ahead)
  double task_load_ms = 0;       // loading the task file in this child ("task_load"; 0: the worker's)
  std::string report_key;        // signs every line on report_fd (common/report_mac.hpp); empty: unsigned
  bool task_confined = false;    // the task was loaded under eval/child_task_confinement.hpp's layers
};

// Runs the request and writes lines to report_fd: {"phase": NAME} when a phase starts, then one
// final ChildRecord: the result (EVAL, TASK_INFO), the task's error, or the device's description.
// `task` may be null for DEVICE_INFO. `request_fd`: the worker's grants of each phase
// (sandbox::wait_for_grant); -1 for none.
void run_child(const task::TaskModule* task, const ChildRequest& request, int report_fd, int request_fd,
               const ChildStart& start = {});

// Work a child can do before it knows its request: on "cuda", create the CUDA context (the
// slowest part of a child's start) and load the engine's check kernels (no kernel runs, so
// another worker's timing is not disturbed). Failures are left for run_child to report.
void prepare_device(const std::string& device);

// For a child forked before its task was known: loads the task file, then run_child(). A request
// with confine_task first confines this process's files (eval/child_task_confinement.hpp: a fresh
// child, with one thread on the CPU; on a GPU after making its CUDA context) and reports the task's
// error without loading it when that fails.
void run_child_loading_task(const std::string& task_path, const ChildRequest& request, int report_fd,
                            int request_fd, ChildStart start);

}  // namespace kernelrl::eval
