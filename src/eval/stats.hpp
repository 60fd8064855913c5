// Summary statistics for repeated measurements (kernel timings): medians with spread, because a
// mean alone hides the outliers that a GPU clock or a noisy neighbour produces.
#pragma once

#include <vector>

namespace kernelrl::eval {

// All fields in the samples' unit (e.g. microseconds) except n and iqr_rel.
struct SampleStats {
  int n = 0;           // number of samples
  double median = 0;   // p50
  double mean = 0;
  double min = 0;
  double max = 0;
  double stdev = 0;    // sample standard deviation (n - 1); 0 for one sample
  double p10 = 0;
  double p90 = 0;
  double iqr_rel = 0;  // (p75 - p25) / median; 0 when the median is 0
};

// Percentiles interpolate linearly between the sorted samples (numpy's default), so the median of
// an even count is the mean of the middle two. Empty input gives all zeros with n = 0. Samples
// must be finite (a NaN timing is a bug upstream).
SampleStats summarize(std::vector<double> samples);

// The q-quantile (q in [0, 1]) of samples already sorted ascending, by linear interpolation;
// 0 for an empty vector.
double quantile_sorted(const std::vector<double>& sorted, double q);

}  // namespace kernelrl::eval
