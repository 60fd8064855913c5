#include "eval/ref_timing_cache.hpp"

namespace kernelrl::eval {

std::optional<TimingSummary> RefTimingCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

bool RefTimingCache::offer(const std::string& key, const TimingSummary& timing) {
  if (timing.n <= 0 || !(timing.median_us > 0)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = by_key_.try_emplace(key, timing);
  if (inserted) return true;
  if (timing.median_us >= it->second.median_us) return false;
  it->second = timing;
  return true;
}

}  // namespace kernelrl::eval
