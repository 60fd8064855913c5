// Host (CPU) candidate for examples/linear_relu: blocked x @ W^T + bias + relu with split accumulators.
#include <kernelrl/abi.h>
#include <algorithm>

static bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32; }

// Dot product with 8 independent partial sums, so -O2 can overlap the multiply-adds.
static inline float dot(const float* a, const float* b, int64_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int u = 0; u < 8; ++u) s[u] += a[k + u] * b[k + u];
  float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; k < n; ++k) t += a[k] * b[k];
  return t;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)stream;
  // inputs: x [M, K]; params (state_dict order): linear.weight [N, K], linear.bias [N].
  if (n_inputs != 1 || n_params != 2 || n_outputs != 1) return 1;
  const DLTensor &xt = inputs[0], &wt = params[0], &bt = params[1];
  if (!is_f32(xt) || !is_f32(wt) || !is_f32(bt) || xt.ndim != 2 || wt.ndim != 2) return 2;
  const int64_t M = xt.shape[0], K = xt.shape[1], N = wt.shape[0];
  if (wt.shape[1] != K || bt.shape[0] != N) return 3;
  const float* x = static_cast<const float*>(xt.data);
  const float* w = static_cast<const float*>(wt.data);
  const float* b = static_cast<const float*>(bt.data);
  float* y = static_cast<float*>(outputs[0].data);

  // Blocks of 32 rows of x by 32 rows of W (2 x 128 KiB at K = 1024) stay in L2 while reused.
  constexpr int64_t MB = 32, NB = 32;
  for (int64_t m0 = 0; m0 < M; m0 += MB)
    for (int64_t n0 = 0; n0 < N; n0 += NB)
      for (int64_t m = m0; m < std::min(M, m0 + MB); ++m)
        for (int64_t n = n0; n < std::min(N, n0 + NB); ++n)
          y[m * N + n] = std::max(dot(x + m * K, w + n * K, K) + b[n], 0.f);
  return 0;
}
