// expect: WRONG_OUTPUT
// Adversarial (host): writes only the first row, then rewrites the output view's shape to one row,
// hoping the checker trusts the view (it keeps its own copy of every shape).
#include <kernelrl/abi.h>
#include <cmath>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  float m = -INFINITY, s = 0.f;
  for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, x[c]);
  for (int64_t c = 0; c < cols; ++c) s += (y[c] = std::exp(x[c] - m));
  for (int64_t c = 0; c < cols; ++c) y[c] /= s;
  outputs[0].shape[0] = 1;
  const_cast<DLTensor*>(inputs)[0].shape[0] = 1;
  return 0;
}
