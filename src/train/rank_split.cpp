// Shares of a step's groups among ranks, and the places of a rank's samples in the whole batch.
#include "train/rank_split.hpp"

#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>

namespace kernelrl::train {

Share rank_share(std::size_t n, RankInfo info) {
  const auto world = static_cast<std::size_t>(std::max(info.world_size, 1));
  const auto rank = static_cast<std::size_t>(std::clamp(info.rank, 0, static_cast<int>(world) - 1));
  const std::size_t base = n / world;
  const std::size_t extra = n % world;  // the first `extra` ranks take one more
  const std::size_t begin = rank * base + std::min(rank, extra);
  return Share{begin, begin + base + (rank < extra ? 1 : 0)};
}

bool SampleKey::operator<(const SampleKey& other) const {
  return std::tie(task, trajectory, turn) < std::tie(other.task, other.trajectory, other.turn);
}

GlobalPlacement place_samples(const std::vector<std::vector<SampleKey>>& keys_by_rank, int rank) {
  struct Entry {
    const SampleKey* key;
    int rank;
    std::size_t index;  // within its rank's list
  };
  std::vector<Entry> all;
  for (int r = 0; r < static_cast<int>(keys_by_rank.size()); ++r) {
    for (std::size_t i = 0; i < keys_by_rank[r].size(); ++i) all.push_back({&keys_by_rank[r][i], r, i});
  }
  std::stable_sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    if (*a.key < *b.key) return true;
    if (*b.key < *a.key) return false;
    return std::tie(a.rank, a.index) < std::tie(b.rank, b.index);
  });
  GlobalPlacement out;
  out.n_samples = all.size();
  if (rank >= 0 && rank < static_cast<int>(keys_by_rank.size())) out.position.resize(keys_by_rank[rank].size());
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].rank == rank) out.position[all[p].index] = p;
  }
  return out;
}

std::string keys_to_text(const std::vector<SampleKey>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : keys) out.push_back({k.task, k.trajectory, k.turn});
  return out.dump();
}

common::Expected<std::vector<SampleKey>> keys_from_text(const std::string& text) {
  const auto keys = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&] { return common::make_error("a rank's sample keys: not an array of [task, trajectory, turn]: " + text.substr(0, 200)); };
  if (!keys.is_array()) return bad();
  std::vector<SampleKey> out;
  for (const auto& k : keys) {
    if (!k.is_array() || k.size() != 3 || !k[0].is_string() || !k[1].is_number_integer() || !k[2].is_number_integer()) {
      return bad();
    }
    out.push_back({k[0].get<std::string>(), k[1].get<int>(), k[2].get<int>()});
  }
  return out;
}

}  // namespace kernelrl::train
