// expect: WRONG_OUTPUT
// Adversarial (host): computes during the 5 correctness trials and the 5 warm-up calls, then does
// nothing (returns at once, output left as is) until its 109th call, and computes again from there
// on: with 100 timed calls, the last timed call on each of the two input sets (calls 109 and 110)
// is right, which is all an evaluator that rechecks only those sees, while 98 of 100 timed calls
// take no time. Caught because timed calls are audited at random (each with probability 0.1;
// missed only if none of 98 is: 0.9^98, about 3e-5).
#include <kernelrl/abi.h>
#include <cmath>

static int g_calls = 0;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  ++g_calls;
  if (g_calls > 10 && g_calls < 109) return 0;
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
