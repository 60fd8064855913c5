// expect: OK (defeated: its cache never hits; timed doing the full work)
// Adversarial (host): keeps a copy of every output it computed, keyed by a fingerprint of the
// input (its pointer and 64 sampled values), and copies the saved output whenever the fingerprint
// matches instead of computing. Fresh inputs per trial, and fresh values in the same buffers
// before every timed call, mean the fingerprint never matches: it is timed doing the full work.
#include <kernelrl/abi.h>
#include <cmath>
#include <cstring>
#include <vector>

struct Entry {
  const void* ptr;
  std::vector<float> probe, output;
};
static std::vector<Entry> g_cache;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const int64_t n = rows * cols;
  std::vector<float> probe;
  for (int64_t i = 0; i < 64; ++i) probe.push_back(x[(i * 7919) % n]);
  for (const auto& e : g_cache) {
    if (e.ptr == x && e.probe == probe) {
      std::memcpy(y, e.output.data(), e.output.size() * sizeof(float));
      return 0;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  g_cache.push_back({x, probe, std::vector<float>(y, y + n)});
  return 0;
}
