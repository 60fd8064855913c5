// Service test candidate (host): dereferences a null pointer (RUNTIME_ERROR, SIGSEGV).
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs, (void)n_inputs, (void)params, (void)n_params, (void)outputs, (void)n_outputs, (void)stream;
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
  return 0;
}
