// expect: WRONG_OUTPUT
// Adversarial (host): returns success without writing anything, hoping the output buffer still
// holds an earlier correct result (stale memory; caught because outputs are poisoned first).
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)outputs; (void)n_outputs; (void)stream;
  return 0;
}
