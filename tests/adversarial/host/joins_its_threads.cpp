// expect: OK
// Honest control (host): the row softmax split over four std::threads that the call joins before it
// returns, the way a CPU kernel uses threads. Must stay OK under the rule that the candidate's
// process be back to its one thread between calls.
#include <kernelrl/abi.h>
#include <cmath>
#include <thread>
#include <vector>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  constexpr int kThreads = 4;
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([=] {
      for (int64_t r = t; r < rows; r += kThreads) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float m = -INFINITY, s = 0.f;
        for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
        for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
        for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
      }
    });
  }
  for (auto& w : workers) w.join();
  return 0;
}
