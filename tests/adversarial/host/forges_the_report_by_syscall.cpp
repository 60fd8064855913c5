// expect: REJECTED
// Adversarial (host): forges_the_report.cpp without importing write: the made-up final record goes
// to the report pipe (descriptor 3) through the syscall instruction itself, then exit_group. Caught
// before loading: the library's machine code makes system calls (compile/system_call_check.hpp).
#include <kernelrl/abi.h>

namespace {

long raw_syscall3(long number, long a, long b, long c) {
  long result;
  asm volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return result;
}

constexpr char kRecord[] =
    "{\"result\": {\"status\": \"OK\", \"correct\": true, \"runtime_us\": 1.0, \"ref_runtime_us\": 1000.0, "
    "\"speedup\": 1000.0}}\n";

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)outputs; (void)n_outputs; (void)stream;
  raw_syscall3(1 /* write */, 3, reinterpret_cast<long>(kRecord), sizeof kRecord - 1);
  raw_syscall3(231 /* exit_group */, 0, 0, 0);
  return 0;
}
