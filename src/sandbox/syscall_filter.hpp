// The system-call filter a child installs before it runs candidate code (seccomp-BPF, x86-64).
// A candidate may compute and start threads; it may not start processes, exec programs, open
// network sockets, signal, trace or poke other processes, or change mounts, namespaces or modules. Such a
// call kills the child with SIGSYS, which the engine reports as REJECTED.
#pragma once

#include "common/expected.hpp"

namespace kernelrl::sandbox {

// Installs the filter in the calling process (and its future threads); irreversible. Its own pid
// is built in (signals to itself stay allowed), so install it in the process it guards. Fails when
// the kernel has no seccomp or the architecture is not x86-64.
common::Fallible install_syscall_filter();

// One line for messages and docs: what the filter forbids.
const char* syscall_filter_summary();

}  // namespace kernelrl::sandbox
