#include "common/crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace kernelrl::common {

namespace {

constexpr std::size_t kStackBytes = 64 * 1024;  // backtrace() and its unwinder need more than SIGSTKSZ

void write_str(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

void write_hex(std::uintptr_t v) {
  char buf[2 + 16 + 1];
  char* p = buf + sizeof buf - 1;
  *p = '\0';
  do {
    *--p = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  *--p = 'x';
  *--p = '0';
  write_str(p);
}

void write_dec(long v) {
  char buf[24];
  char* p = buf + sizeof buf - 1;
  *p = '\0';
  const bool negative = v < 0;
  unsigned long u = negative ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) *--p = '-';
  write_str(p);
}

struct Registers {
  std::uintptr_t ip = 0;  // instruction pointer
  std::uintptr_t sp = 0;  // stack pointer
};

Registers registers_of(const void* context) {
  Registers r;
  if (context == nullptr) return r;
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  r.ip = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  r.sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  r.ip = static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
  r.sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  (void)uc;
#endif
  return r;
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  write_str("\nkernelrl: fatal signal ");
  write_str(strsignal(sig));  // not strictly async-signal-safe, but reads a static table in glibc
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) {
    write_str(" at address ");
    write_hex(reinterpret_cast<std::uintptr_t>(info != nullptr ? info->si_addr : nullptr));
    write_str(" (si_code ");
    write_dec(info != nullptr ? info->si_code : 0);
    write_str(")");
  }
  const Registers regs = registers_of(context);
  write_str(", instruction pointer ");
  write_hex(regs.ip);
  write_str(", thread ");
  write_dec(static_cast<long>(::syscall(SYS_gettid)));
  write_str(" of process ");
  write_dec(static_cast<long>(::getpid()));
  write_str("; backtrace (resolve with addr2line -f -C -e OBJECT OFFSET):\n");
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  // A jump to a bad address (a null function pointer: the fault is the instruction fetch itself)
  // leaves nothing to unwind from; the caller's return address is among the top words of the stack.
  if (info != nullptr && regs.ip == reinterpret_cast<std::uintptr_t>(info->si_addr) && regs.sp != 0) {
    write_str("top of the stack (the first code address is the caller's return address):\n");
    void* words[16];
    for (int i = 0; i < 16; ++i) words[i] = reinterpret_cast<void* const*>(regs.sp)[i];
    ::backtrace_symbols_fd(words, 16, STDERR_FILENO);
  }
  ::signal(sig, SIG_DFL);  // the default action ends the process with the same signal
  ::raise(sig);
}

}  // namespace

CrashStack::CrashStack() : memory_(new char[kStackBytes]) {
  stack_t ss{};
  ss.ss_sp = memory_.get();
  ss.ss_size = kStackBytes;
  installed_ = ::sigaltstack(&ss, nullptr) == 0;
}

CrashStack::~CrashStack() {
  if (!installed_) return;
  stack_t ss{};
  ss.ss_flags = SS_DISABLE;
  (void)::sigaltstack(&ss, nullptr);
}

void install_crash_report() {
  static CrashStack* main_stack = new CrashStack();  // the installing thread's, for the process's life
  (void)main_stack;
  void* warm[1];
  (void)::backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace kernelrl::common
