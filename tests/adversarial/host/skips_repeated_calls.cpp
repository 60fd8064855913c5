// expect: WRONG_OUTPUT
// Adversarial (host): computes when it sees new buffers, but returns at once when called again on
// the same input and output buffers, hoping the last result is still there (a timing hack: the
// timed calls would measure nothing). Caught because outputs are poisoned before every timed call
// and the timed calls' outputs are rechecked.
#include <kernelrl/abi.h>
#include <cmath>

static const void* g_seen[4];

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  for (const void* p : g_seen)
    if (p == outputs[0].data) return 0;
  for (auto& p : g_seen)
    if (!p) { p = outputs[0].data; break; }
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
  return 0;
}
