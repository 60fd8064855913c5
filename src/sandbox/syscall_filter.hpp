// The system-call filter a child installs before it runs candidate code (seccomp-BPF, x86-64).
// A candidate may compute and start threads; it may not start processes, exec programs, open
// network sockets, signal, trace or poke other processes, or change mounts, namespaces or modules. Such a
// call kills the child with SIGSYS, which the engine reports as REJECTED. A build that runs
// candidate code (the kernelbench prebuild, which must start compilers) gets the Build profile:
// processes and exec allowed, the rest as for a candidate except signals.
#pragma once

#include "common/expected.hpp"

namespace kernelrl::sandbox {

enum class FilterProfile {
  Candidate,  // no processes, exec, network, signals to others, tracing, mounts, namespaces, modules
  Build,      // processes, exec and signals allowed (compilers, their job servers); no network, tracing,
              // mounts, namespaces, modules
};

// Installs the filter in the calling process (and its future threads and, for Build, the processes
// it starts); irreversible. Its own pid is built in (signals to itself stay allowed), so install it
// in the process it guards. Fails when the kernel has no seccomp or the architecture is not x86-64.
common::Fallible install_syscall_filter(FilterProfile profile = FilterProfile::Candidate);

// One line for messages and docs: what the filter forbids.
const char* syscall_filter_summary(FilterProfile profile = FilterProfile::Candidate);

}  // namespace kernelrl::sandbox
