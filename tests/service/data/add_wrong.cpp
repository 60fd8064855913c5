// Service test candidate (host): off by one, the last element is never written (WRONG_OUTPUT).
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {
  (void)params, (void)n_params, (void)stream;
  if (n_inputs != 2 || n_outputs != 1) return 1;
  const float* x = static_cast<const float*>(inputs[0].data);
  const float* y = static_cast<const float*>(inputs[1].data);
  float* out = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i + 1 < inputs[0].shape[0]; ++i) out[i] = x[i] + y[i];
  return 0;
}
