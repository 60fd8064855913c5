#include "rl/rewards.hpp"

#include <algorithm>
#include <cmath>

namespace kernelrl::rl {

double score(bool correct, double speedup, const ScoreConfig& config) {
  if (!correct) return 0.0;
  double speedup_term = config.speedup_cap ? std::min(speedup, *config.speedup_cap) : speedup;
  return config.w_correct + speedup_term;
}

std::vector<double> returns(const std::vector<double>& scores, const ReturnConfig& config) {
  std::vector<double> R(scores.size(), 0.0);
  double later = 0.0;  // R_{t+1}
  for (std::size_t k = scores.size(); k-- > 0;) {
    const double s_t = scores[k];
    const double discounted_later = config.gamma * later;
    R[k] = config.kind == ReturnKind::DISCOUNTED_SUM ? s_t + discounted_later
                                                     : (k + 1 == scores.size() ? s_t : std::max(s_t, discounted_later));
    later = R[k];
  }
  return R;
}

namespace {

struct Moments {
  double mean = 0;
  double std = 0;  // sample standard deviation (n - 1); 0 for n < 2
};

Moments moments(const std::vector<double>& xs) {
  Moments m;
  if (xs.empty()) return m;
  for (double x : xs) m.mean += x;
  m.mean /= static_cast<double>(xs.size());
  if (xs.size() < 2) return m;
  double ss = 0;
  for (double x : xs) ss += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  return m;
}

// Normalises the samples of one group, given as (trajectory, turn) positions with a return.
void normalise_group(const std::vector<std::vector<std::optional<double>>>& R,
                     const std::vector<std::pair<std::size_t, std::size_t>>& group, const AdvantageConfig& config,
                     std::vector<std::vector<std::optional<double>>>& A) {
  for (auto [i, t] : group) A[i][t] = 0.0;  // a group of one: nothing to compare against
  if (group.size() < 2) return;
  std::vector<double> values;
  for (auto [i, t] : group) values.push_back(*R[i][t]);
  const Moments m = moments(values);
  const double n = static_cast<double>(group.size());
  for (auto [i, t] : group) {
    const double centred = *R[i][t] - m.mean;
    switch (config.kind) {
      case AdvantageKind::LEAVE_ONE_OUT_TURN:
        // R_i - mean_{j != i} R_j  ==  n / (n - 1) * (R_i - mean)
        A[i][t] = n / (n - 1) * centred;
        break;
      default:
        A[i][t] = config.divide_by_std ? centred / (m.std + config.eps) : centred;
    }
  }
}

}  // namespace

std::vector<std::vector<std::optional<double>>> advantages_where_present(
    const std::vector<std::vector<std::optional<double>>>& R, const AdvantageConfig& config) {
  std::vector<std::vector<std::optional<double>>> A;
  std::size_t n_turns = 0;
  for (const auto& traj : R) {
    A.emplace_back(traj.size());
    n_turns = std::max(n_turns, traj.size());
  }
  auto present = [&](std::size_t i, std::size_t t) { return t < R[i].size() && R[i][t].has_value(); };
  if (config.kind == AdvantageKind::GRPO_TASK) {
    std::vector<std::pair<std::size_t, std::size_t>> all;
    for (std::size_t i = 0; i < R.size(); ++i)
      for (std::size_t t = 0; t < R[i].size(); ++t)
        if (present(i, t)) all.emplace_back(i, t);
    normalise_group(R, all, config, A);
    return A;
  }
  for (std::size_t t = 0; t < n_turns; ++t) {
    std::vector<std::pair<std::size_t, std::size_t>> turn;
    for (std::size_t i = 0; i < R.size(); ++i)
      if (present(i, t)) turn.emplace_back(i, t);
    normalise_group(R, turn, config, A);
  }
  return A;
}

std::vector<std::vector<double>> advantages(const std::vector<std::vector<double>>& R, const AdvantageConfig& config) {
  std::vector<std::vector<std::optional<double>>> all;
  for (const auto& traj : R) all.emplace_back(traj.begin(), traj.end());
  std::vector<std::vector<double>> A;
  for (const auto& traj : advantages_where_present(all, config)) {
    A.emplace_back();
    for (const auto& a : traj) A.back().push_back(*a);
  }
  return A;
}

std::string to_string(ReturnKind kind) {
  return kind == ReturnKind::DISCOUNTED_SUM ? "discounted_sum" : "discounted_max";
}

std::string to_string(AdvantageKind kind) {
  switch (kind) {
    case AdvantageKind::GRPO_TASK:
      return "grpo_task";
    case AdvantageKind::GRPO_PER_TURN:
      return "grpo_per_turn";
    case AdvantageKind::LEAVE_ONE_OUT_TURN:
      return "leave_one_out_turn";
  }
  return "?";
}

common::Expected<ReturnKind> parse_return_kind(const std::string& name) {
  for (ReturnKind k : {ReturnKind::DISCOUNTED_SUM, ReturnKind::DISCOUNTED_MAX})
    if (to_string(k) == name) return k;
  return common::make_error("return kind '" + name + "' is not one of discounted_sum, discounted_max");
}

common::Expected<AdvantageKind> parse_advantage_kind(const std::string& name) {
  for (AdvantageKind k : {AdvantageKind::GRPO_TASK, AdvantageKind::GRPO_PER_TURN, AdvantageKind::LEAVE_ONE_OUT_TURN})
    if (to_string(k) == name) return k;
  return common::make_error("advantage kind '" + name + "' is not one of grpo_task, grpo_per_turn, leave_one_out_turn");
}

}  // namespace kernelrl::rl
