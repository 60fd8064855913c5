// The confinement of an evaluating child whose task is code nobody vouched for
// (ChildRequest::confine_task: the service's jobs that send a task as text). The worker never loads
// such a task; a fresh child does, after putting its files under two Landlock layers (which bind
// the calling thread and the threads it starts later: on the CPU the child has one thread then; on a
// GPU the CUDA driver's threads, started first because the driver does not start under them, stay
// outside):
// - reading, listing and executing only below the roots of the candidate's own process
//   (runner/confine.hpp: the system's program and library trees, the interpreter's paths, the
//   loader's and a few device and information files, its own /proc entry, its scratch folder),
//   the task's folder, the candidate's compiled artifact, the /proc entry of the candidate's
//   process it started and CUDA's JIT cache: not /etc, /tmp, the home folder, other tasks or other
//   candidates' files;
// - writing, creating and removing only below its scratch folder and CUDA's JIT cache, and writing
//   the device files a candidate may use: not /dev as a folder, not /dev/shm.
// The task's module, its reference and get_inputs() then run under both, as does everything after;
// the evaluation's own layers come on top as for every evaluation. Internal to src/eval.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "eval/protocol.hpp"

namespace kernelrl::eval {

// Confines this process's files as above for `request` on the task at `task_path`. Fails, having
// confined nothing or only the first layer, when the kernel has no Landlock or a root cannot be
// opened: the caller must then not load the task.
common::Fallible confine_untrusted_task(const std::string& task_path, const ChildRequest& request);

}  // namespace kernelrl::eval
