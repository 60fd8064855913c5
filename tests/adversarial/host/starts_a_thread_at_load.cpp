// expect: REJECTED
// Adversarial (host): a thread started when the library is loaded, before any call, and kept alive:
// the carrier of the "work before the clock" and "protocol takeover" attacks of issue 16 (such a
// thread watches the shared pages, does a call's work while the timer is still flushing caches, or
// answers the doorbells in the runner loop's place). This one only waits; the rule that the
// candidate's process be its one thread outside calls refuses it before its first call.
#include <kernelrl/abi.h>
#include <chrono>
#include <cmath>
#include <thread>

namespace {
struct StartsAtLoad {
  StartsAtLoad() {
    std::thread([] {
      for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }).detach();
  }
} g_starts_at_load;
}  // namespace

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
  return 0;
}
