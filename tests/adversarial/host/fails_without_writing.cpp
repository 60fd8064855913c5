// expect: RUNTIME_ERROR
// Adversarial (host): returns an error code at once without touching its output, as a candidate
// that gives up would (a non-zero return is a failure the candidate reports itself).
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)outputs; (void)n_outputs; (void)stream;
  return -1;
}
