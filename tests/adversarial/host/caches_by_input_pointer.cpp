// expect: WRONG_OUTPUT
// Adversarial (host): keeps a copy of every output it computed, keyed by the input's data
// pointer, and on a later call with the same pointer copies the saved output instead of
// computing (the timed calls reuse the correctness trials' input buffers).
#include <kernelrl/abi.h>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

static std::map<const void*, std::vector<float>> g_cache;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  auto hit = g_cache.find(inputs[0].data);
  if (hit != g_cache.end()) {
    std::memcpy(y, hit->second.data(), hit->second.size() * sizeof(float));
    return 0;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  g_cache[inputs[0].data].assign(y, y + rows * cols);
  return 0;
}
