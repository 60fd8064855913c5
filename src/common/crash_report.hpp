// A last word from a crashing kernelrl process: on SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT the
// handler writes the signal, the faulting address, the instruction pointer, the thread and a raw
// backtrace (addresses with the object and offset; resolve them with addr2line) to stderr, then
// lets the signal end the process as it would have. The handler runs on an alternate signal stack,
// so a stack overflow (deep recursion) is reported too, on every thread that has one: the installing
// thread, and threads that hold a CrashStack.
// Long runs (`kernelrl train`, rollouts) install it so a crash on a remote machine says where.
#pragma once

#include <memory>

namespace kernelrl::common {

// Installs the handler for this process (idempotent) and an alternate stack for the calling
// thread. Async-signal-safe output only.
void install_crash_report();

// An alternate signal stack for the thread that creates it, for as long as it lives (signal stacks
// are per thread). Worker threads of long runs hold one; harmless when no handler is installed.
class CrashStack {
 public:
  CrashStack();
  ~CrashStack();
  CrashStack(const CrashStack&) = delete;
  CrashStack& operator=(const CrashStack&) = delete;

 private:
  std::unique_ptr<char[]> memory_;
  bool installed_ = false;
};

}  // namespace kernelrl::common
