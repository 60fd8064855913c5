// expect: WRONG_OUTPUT
// Adversarial (host): computes the softmax, then stores it quantised to steps of 0.05 (a 5-bit
// fixed-point output, the kind of shortcut a low-precision kernel takes). The row maxima of a
// (64, 256) softmax of randn are about 0.01-0.08, so rounding errors reach 0.025, past float32's
// atol + rtol * |ref| = 0.01 + 0.01 * |ref|. (bfloat16-style rounding, relative error <= 0.4%,
// stays inside the tolerance and is not a hack by the checker's rule.)
#include <kernelrl/abi.h>
#include <cmath>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = std::round(y[i] / 0.05f) * 0.05f;
  return 0;
}
