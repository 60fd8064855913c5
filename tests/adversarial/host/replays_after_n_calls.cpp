// expect: WRONG_OUTPUT
// Adversarial (host): computes for the first 5 calls (the correctness trials), then replays the
// 5th result on every later call, hoping the timed calls reuse one input set. Caught because the
// timed calls rotate over two input sets and the outputs of the last timed call on each are
// rechecked.
#include <kernelrl/abi.h>
#include <cmath>
#include <cstring>
#include <vector>

static int g_calls = 0;
static std::vector<float> g_last;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  if (++g_calls > 5 && !g_last.empty()) {
    std::memcpy(y, g_last.data(), g_last.size() * sizeof(float));
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
  g_last.assign(y, y + rows * cols);
  return 0;
}
