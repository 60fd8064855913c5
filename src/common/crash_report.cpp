#include "common/crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <initializer_list>

namespace kernelrl::common {

namespace {

void write_str(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

void on_fatal_signal(int sig) {
  write_str("\nkernelrl: fatal signal ");
  write_str(strsignal(sig));  // not strictly async-signal-safe, but reads a static table in glibc
  write_str("; backtrace (resolve with addr2line -f -C -e OBJECT OFFSET):\n");
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  ::signal(sig, SIG_DFL);  // the default action ends the process with the same signal
  ::raise(sig);
}

}  // namespace

void install_crash_report() {
  void* warm[1];
  (void)::backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace kernelrl::common
