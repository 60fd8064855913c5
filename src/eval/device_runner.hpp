// A native candidate on a GPU in a process of its own (runner/device_runner.hpp), forked by the
// evaluating child at its start (eval/runner_ahead.hpp). The child allocates one device arena, exports it through CUDA IPC and keeps
// everything else (the reference, its outputs, the seeds, the checker, the timer, the report
// channel) in its own process and context; the runner maps the arena in a context of its own and
// calls the candidate on views of it. The child reads the outputs from its own mapping of the arena.
// Calls are timed by the child on the host clock (eval/timing.hpp): events of the child's context
// around work of another context would time the GPU's switch between the two (docs/security.md).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "eval/runner_candidate.hpp"

namespace kernelrl::eval {

// Hands the candidate to the runner forked ahead (START), waits for its set-up and confinement
// report, loads the candidate there and copies `params` (device tensors) into the arena. Call on
// the device the evaluation uses. Throws TaskError when there is no runner or it could not set
// itself up (the machine's failure, not the candidate's).
RunnerStart start_device_runner(const std::string& artifact, const std::vector<pybind11::object>& params,
                                const RunnerOptions& options);

}  // namespace kernelrl::eval
