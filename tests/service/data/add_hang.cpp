// Service test candidate (host): never returns (TIMEOUT).
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs, (void)n_inputs, (void)params, (void)n_params, (void)outputs, (void)n_outputs, (void)stream;
  static volatile int ready = 0;
  while (ready == 0) {
  }
  return 0;
}
