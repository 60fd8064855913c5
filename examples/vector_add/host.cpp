// Host (CPU) candidate for examples/vector_add: C = A + B, plain loop.
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 2 || n_outputs != 1) return 1;
  for (int k = 0; k < 2; ++k)
    if (inputs[k].dtype.code != kDLFloat || inputs[k].dtype.bits != 32) return 2;
  const int64_t n = kernelrl_numel(&outputs[0]);
  if (kernelrl_numel(&inputs[0]) != n || kernelrl_numel(&inputs[1]) != n) return 3;

  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* c = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  return 0;
}
