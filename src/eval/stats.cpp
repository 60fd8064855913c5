// summarize: sort once, read quantiles off the sorted vector, two passes for mean and deviation.
#include "eval/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kernelrl::eval {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

SampleStats summarize(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.n = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile_sorted(samples, 0.5);
  s.p10 = quantile_sorted(samples, 0.1);
  s.p90 = quantile_sorted(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / s.n;
  if (s.n > 1) {
    double sum_sq = 0;
    for (double x : samples) sum_sq += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(sum_sq / (s.n - 1));
  }
  const double iqr = quantile_sorted(samples, 0.75) - quantile_sorted(samples, 0.25);
  s.iqr_rel = s.median != 0 ? iqr / s.median : 0;
  return s;
}

}  // namespace kernelrl::eval
