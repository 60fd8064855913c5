// A last word from a crashing kernelrl process: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT the
// handler writes the signal and a raw backtrace (addresses with the object and offset; resolve
// them with addr2line) to stderr, then lets the signal end the process as it would have.
// Long runs (`kernelrl train`, rollouts) install it so a crash on a remote machine says where.
#pragma once

namespace kernelrl::common {

// Installs the handler for this process (idempotent). Async-signal-safe output only.
void install_crash_report();

}  // namespace kernelrl::common
