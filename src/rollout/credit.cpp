#include "rollout/credit.hpp"

#include <algorithm>
#include <numeric>

namespace kernelrl::rollout {

TaskCredit assign_credit(const TaskTurns& turns, const rl::ReturnConfig& return_config,
                         const rl::AdvantageConfig& advantage_config) {
  const std::size_t m = turns.scores.size();
  auto unanswered = [&](const TurnRef& p) {
    const auto j = static_cast<std::size_t>(p.trajectory), t = static_cast<std::size_t>(p.turn - 1);
    return j < turns.unanswered.size() && t < turns.unanswered[j].size() && turns.unanswered[j][t];
  };
  std::vector<std::vector<double>> sum(m), n_paths(m);
  std::vector<std::vector<bool>> has_child(m);
  for (std::size_t j = 0; j < m; ++j) {
    sum[j].assign(turns.scores[j].size(), 0.0);
    n_paths[j].assign(turns.scores[j].size(), 0.0);
    has_child[j].assign(turns.scores[j].size(), false);
  }
  for (std::size_t j = 0; j < m; ++j)
    for (const auto& from : turns.from[j])
      if (from) has_child[static_cast<std::size_t>(from->trajectory)][static_cast<std::size_t>(from->turn - 1)] = true;

  for (std::size_t j = 0; j < m; ++j) {
    for (std::size_t t = 0; t < turns.scores[j].size(); ++t) {
      if (has_child[j][t]) continue;  // not a leaf
      std::vector<TurnRef> path{{static_cast<int>(j), static_cast<int>(t + 1)}};
      while (const auto& from = turns.from[static_cast<std::size_t>(path.back().trajectory)]
                                          [static_cast<std::size_t>(path.back().turn - 1)]) {
        path.push_back(*from);
      }
      std::reverse(path.begin(), path.end());
      std::erase_if(path, [&](const TurnRef& p) { return unanswered(p); });
      std::vector<double> scores;
      for (const auto& p : path) scores.push_back(turns.scores[static_cast<std::size_t>(p.trajectory)][static_cast<std::size_t>(p.turn - 1)]);
      const std::vector<double> R = rl::returns(scores, return_config);
      for (std::size_t k = 0; k < path.size(); ++k) {
        const auto pj = static_cast<std::size_t>(path[k].trajectory);
        const auto pt = static_cast<std::size_t>(path[k].turn - 1);
        sum[pj][pt] += R[k];
        n_paths[pj][pt] += 1;
      }
    }
  }
  TaskCredit credit;
  for (std::size_t j = 0; j < m; ++j) {
    credit.returns.emplace_back(sum[j].size());
    for (std::size_t t = 0; t < sum[j].size(); ++t) {
      if (!unanswered({static_cast<int>(j), static_cast<int>(t + 1)})) {
        credit.returns[j][t] = sum[j][t] / std::max(1.0, n_paths[j][t]);
      }
    }
  }
  credit.advantages = rl::advantages_where_present(credit.returns, advantage_config);
  return credit;
}

std::vector<int> select_beam(const std::vector<double>& scores, int beam_width) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
  });
  order.resize(std::min(order.size(), static_cast<std::size_t>(std::max(beam_width, 0))));
  return order;
}

int beam_parent(const std::vector<int>& kept, int n_trajectories, int j) {
  const int copies = n_trajectories / static_cast<int>(kept.size());
  return kept[static_cast<std::size_t>(std::min(j / copies, static_cast<int>(kept.size()) - 1))];
}

}  // namespace kernelrl::rollout
