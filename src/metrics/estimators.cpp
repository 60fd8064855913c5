// Estimators as products and running weights, never as raw binomial coefficients, which overflow
// a double past n of about 1000.
#include "metrics/estimators.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace kernelrl::metrics {

double pass_at_k(int n, int c, int k) {
  assert(1 <= k && k <= n && 0 <= c && c <= n);
  if (n - c < k) return 1.0;  // every k-subset must include a correct sample
  double p_all_incorrect = 1.0;  // C(n-c, k) / C(n, k)
  for (int i = n - c + 1; i <= n; ++i) p_all_incorrect *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - p_all_incorrect;
}

double expected_max_of_k(std::vector<double> values, int k) {
  const int n = static_cast<int>(values.size());
  assert(1 <= k && k <= n);
  std::sort(values.begin(), values.end());
  // w_i = C(i-1, k-1) / C(n, k) is the chance that v_(i) is the maximum of the subset.
  // w_n = k / n, and w_{i-1} = w_i * (i - k) / (i - 1), walking down to w_k.
  double expected = 0.0;
  double w_i = static_cast<double>(k) / n;
  for (int i = n; i >= k; --i) {
    expected += values[static_cast<std::size_t>(i - 1)] * w_i;
    if (i > 1) w_i *= static_cast<double>(i - k) / (i - 1);
  }
  return expected;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

std::optional<double> geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum_log = 0.0;
  for (double v : values) {
    assert(v > 0);
    sum_log += std::log(v);
  }
  return std::exp(sum_log / static_cast<double>(values.size()));
}

std::vector<int> ks_up_to(int n, const std::vector<int>& ks) {
  std::vector<int> kept;
  for (int k : ks) {
    if (k >= 1 && k <= n) kept.push_back(k);
  }
  return kept;
}

}  // namespace kernelrl::metrics
