// expect: WRONG_OUTPUT
// Adversarial (host): never reads its input. It replays PyTorch's CPU torch.randn (MT19937 and
// Box-Muller, as torch.manual_seed(0) then get_inputs() would draw them) and writes the softmax of
// that guess, which is right whenever a naive harness seeds with 0. Caught because every trial is
// seeded from getrandom().
#include <kernelrl/abi.h>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

// torch's CPU normal_fill for a contiguous float tensor of >= 16 elements: uniform floats from
// the generator's 32-bit output (24 bits kept), then Box-Muller on blocks of 16.
static std::vector<float> torch_randn(uint64_t seed, int64_t n) {
  std::mt19937 gen(static_cast<uint32_t>(seed));
  std::vector<float> d(static_cast<size_t>(n));
  auto uniform = [&] { return static_cast<float>((gen() & ((1u << 24) - 1)) * (1.0f / (1u << 24))); };
  auto fill16 = [](float* p) {
    for (int j = 0; j < 8; ++j) {
      const float u1 = 1 - p[j], u2 = p[j + 8];
      const float radius = std::sqrt(-2 * std::log(u1));
      const float theta = 2.0f * static_cast<float>(M_PI) * u2;
      p[j] = radius * std::cos(theta);
      p[j + 8] = radius * std::sin(theta);
    }
  };
  for (auto& v : d) v = uniform();
  for (int64_t i = 0; i + 15 < n; i += 16) fill16(d.data() + i);
  if (n % 16 != 0) {
    float* tail = d.data() + n - 16;
    for (int j = 0; j < 16; ++j) tail[j] = uniform();
    fill16(tail);
  }
  return d;
}

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  static const std::vector<float> guess = torch_randn(0, rows * cols);  // the naive harness's seed
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = guess.data() + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  return 0;
}
