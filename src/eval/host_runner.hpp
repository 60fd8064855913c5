// A host candidate in a process of its own (the "runner"), forked from the evaluating child before
// either restricts itself. The child keeps the checker, the reference, the seeds and the report
// channel; the runner holds only the candidate's library, no descriptor but stdout and stderr,
// and pages it shares with the child: the tensors of one call and a header saying where they are.
// A call is a doorbell ring each way (runner/protocol.hpp; the child's side in
// eval/runner_candidate.hpp, shared with native candidates' runner, eval/device_runner.hpp). So a candidate cannot read the
// reference's outputs, patch the checker or the timer, or write the report: none of them is in its
// process. When the runner dies the child ends the same way (same signal or exit code), so the
// engine classifies a crash, a filter kill (SIGSYS) or an oversized file (SIGXFSZ) as before; a
// hang is the child's phase limit, as before.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/candidate.hpp"
#include "eval/runner_candidate.hpp"

namespace kernelrl::eval {

// Restricts the calling process the way an evaluating child restricts itself before candidate
// code runs (write confinement, system-call filter, memory limit) and says which layers are active.
using ConfineProcess = std::function<nlohmann::json()>;

// Forks the runner, which confines itself with `confine`, then dlopen()s `artifact` and resolves
// kernelrl_forward. `params` (the reference's state_dict, CPU tensors) are copied to the shared
// pages once; the runner sees them there. Call before the child installs its own system-call
// filter (it forks).
RunnerStart start_host_runner(const std::string& artifact, const std::vector<pybind11::object>& params,
                              const RunnerOptions& options, const ConfineProcess& confine);

}  // namespace kernelrl::eval
