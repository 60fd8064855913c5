// expect: WRONG_OUTPUT
// Adversarial (host): computes every row on its first call, then only the first half of the rows,
// hoping the second half of the output buffer still holds the earlier result (stale memory).
// Caught because outputs are poisoned before every call.
#include <kernelrl/abi.h>
#include <cmath>

static bool g_first = true;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const int64_t rows_done = g_first ? rows : rows / 2;
  g_first = false;
  for (int64_t r = 0; r < rows_done; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  return 0;
}
