// Hack: a softmax over 256 columns has every value near 1/256 = 0.004, under the absolute
// tolerance (1e-2), so all zeros pass an element-wise check. Must be WRONG_OUTPUT: the output as a
// whole (relative L2 error 1) is checked too.
#include <kernelrl/abi.h>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {
  (void)inputs; (void)n_inputs; (void)params; (void)n_params; (void)stream;
  for (int o = 0; o < n_outputs; ++o) {
    float* y = static_cast<float*>(outputs[o].data);
    const int64_t n = kernelrl_numel(&outputs[o]);
    for (int64_t i = 0; i < n; ++i) y[i] = 0.f;
  }
  return 0;
}
