// expect: REJECTED
// Adversarial (host): an honest softmax, but its first call starts a detached thread that spins
// forever, so the reference (timed in pairs with the candidate while its process lives) runs beside
// a busy core and looks slower: the speedup rose 50-100% this way (issue 16). Caught because the
// candidate's process must be back to its one thread between calls; a reference time measured
// beside a refused candidate is not kept for later candidates.
#include <kernelrl/abi.h>
#include <atomic>
#include <cmath>
#include <thread>

static std::atomic<bool> g_started{false};

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  if (!g_started.exchange(true)) {
    std::thread([] {
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }).detach();
  }
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
