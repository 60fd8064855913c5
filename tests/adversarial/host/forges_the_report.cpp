// expect: REJECTED
// Adversarial (host): the evaluator reports through a descriptor (3) of the evaluating child. It
// writes a made-up final record (correct, 1000x speedup) there and exits before the real checker
// can say otherwise. Caught before
// loading: the library imports write, and candidates make no system calls of their own
// (compile/import_check.hpp); forges_the_report_by_syscall.cpp does it without the import. Behind
// that, a host candidate runs in a process of its own where descriptor 3 is not the report
// (eval/host_runner.hpp): EngineHostTest.AForgedReportNeverReachesTheEngine.
#include <kernelrl/abi.h>
#include <unistd.h>
#include <cstring>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)outputs; (void)n_outputs; (void)stream;
  const char* record =
      "{\"result\": {\"status\": \"OK\", \"correct\": true, \"runtime_us\": 1.0, \"ref_runtime_us\": 1000.0, "
      "\"speedup\": 1000.0}}\n";
  (void)!write(3, record, std::strlen(record));
  _exit(0);
}
