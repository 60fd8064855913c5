// How a candidate's process confines itself (docs/security.md, "One isolation design"), in two
// steps, both before any of the candidate's code is loaded:
// - at its start, before it starts a thread (Landlock binds the calling thread and the threads it
//   starts later, so a thread started before could be steered unconfined): reading, listing and
//   executing only below the system's program and library trees, the interpreter's own paths
//   (kernelbench), its working folder (the evaluating child's scratch, where the child puts the
//   candidate's files for it) and a few device and information files: never /etc, /tmp, /dev/shm,
//   the home folder or another candidate's files; writing only to /dev/null and the device files
//   CUDA needs, creating nothing anywhere;
// - once set up (its CUDA context, the child's arena): files no larger than 64 MB, on the CPU an
//   address space that may grow by 8 GB at most, every capability dropped (uid 0 without them is
//   held to file permissions like any user), and the runner's system-call filter
//   (sandbox/syscall_filter.hpp) on every thread: no processes, exec, network, tracing or signals
//   to others, no executable memory but read-only file mappings (W^X), no file creation, nothing
//   root could do to the machine or its clocks, and this program's own image (its relocations made
//   read-only by full RELRO) never remapped or reprotected.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelrl::runner {

// The folders and files the process may read once confined (absolute, existing, symbolic links
// resolved): see above; `interpreter_paths` may be empty.
std::vector<std::string> readable_roots(bool cuda, const std::vector<std::string>& interpreter_paths);

// The first step: Landlock on this process, which must have one thread. The report names the layer
// with true, or false and an `..._error` text when the kernel could not provide it; never throws.
nlohmann::json confine_files_at_start(bool cuda, const std::vector<std::string>& interpreter_paths = {});

// The second step, on every thread, irreversibly; reported the same way.
nlohmann::json confine_calls(bool limit_address_space);

}  // namespace kernelrl::runner
