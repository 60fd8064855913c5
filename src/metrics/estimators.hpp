// The sampling estimators behind the report (docs/report.md): unbiased pass@k, the exact expected
// best of k draws, and the geometric mean. Pure functions of plain numbers.
#pragma once

#include <optional>
#include <vector>

namespace kernelrl::metrics {

// Unbiased pass@k (Chen et al., 2021): the probability that a random k-subset of n samples, c of
// them correct, holds at least one correct sample: 1 - C(n-c, k) / C(n, k), computed as the
// product 1 - prod_{i=n-c+1}^{n} (1 - k/i) so that large n does not overflow.
// Requires 1 <= k <= n and 0 <= c <= n.
double pass_at_k(int n, int c, int k);

// E[max of a random k-subset] of `values` (drawn without replacement), exactly:
// sum_i v_(i) * C(i-1, k-1) / C(n, k) over the ascending order statistics v_(1..n).
// Requires 1 <= k <= values.size().
double expected_max_of_k(std::vector<double> values, int k);

// Arithmetic mean; 0 for no values.
double mean(const std::vector<double>& values);

// exp(mean(log v)); none for no values. Requires every value > 0.
std::optional<double> geometric_mean(const std::vector<double>& values);

// The values of `ks` that lie in [1, n], in their order.
std::vector<int> ks_up_to(int n, const std::vector<int>& ks);

}  // namespace kernelrl::metrics
