// expect: REJECTED
// Adversarial (host): returns at once and leaves the work to a detached thread that writes the
// output 500 ms later, so a timed call would only measure starting a thread. Caught because the
// candidate's process must be back to its one thread when a call is judged (its thread is still
// running: REJECTED); before that rule the outputs, checked as soon as the call returned, were
// wrong, and without the delay the thread could win the race and its work escape the timer.
#include <kernelrl/abi.h>
#include <chrono>
#include <cmath>
#include <thread>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      float m = -INFINITY, s = 0.f;
      for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
      for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
      for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
    }
  }).detach();
  return 0;
}
