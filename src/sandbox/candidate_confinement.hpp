// The confinement every process that runs candidate code puts itself under before the candidate's
// first instruction: files no larger than kMaxFileBytes, for good (RLIMIT_FSIZE, the hard limit too),
// writes only below sandbox::candidate_writable_roots() (Landlock) and the Candidate system-call filter
// (no new processes, exec, network, signals to others, tracing). Used by the evaluating child and by the candidate's own process (eval/host_runner.hpp,
// runner/device_runner.hpp). Irreversible.
#pragma once

#include <nlohmann/json.hpp>

namespace kernelrl::sandbox {

// Which layers are active, for a result's `isolation`: "file_size_limit", "write_confinement" and
// "syscall_filter" (true or false), with "..._error" texts for a layer that could not be set up.
nlohmann::json confine_candidate_process();

}  // namespace kernelrl::sandbox
