// expect: RUNTIME_ERROR
// Adversarial (host): ends its process with exit code 0 in the middle of the evaluation, hoping a
// clean exit reads as success.
#include <kernelrl/abi.h>
#include <unistd.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)outputs; (void)n_outputs; (void)stream;
  _exit(0);
}
