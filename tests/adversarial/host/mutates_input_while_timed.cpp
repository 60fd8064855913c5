// expect: WRONG_OUTPUT
// Adversarial (host): behaves during the 5 correctness trials, then from the 6th call on (warm-up
// and timed calls) zeroes its input after computing, hoping inputs are only checked during the
// correctness trials. Caught because the timed input sets are compared with untouched copies
// after timing.
#include <kernelrl/abi.h>
#include <cmath>

static int g_calls = 0;

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
  if (++g_calls > 5) {
    float* scratch = static_cast<float*>(inputs[0].data);  // inputs are read-only
    for (int64_t i = 0; i < rows * cols; ++i) scratch[i] = 0.f;
  }
  return 0;
}
