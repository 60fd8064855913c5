// The reference's timing per task, kept for the rest of a run (EngineConfig::reuse_ref_timing), so
// evaluations of the task time only the candidate. The engine times it alone, in a child of its own,
// before the task's first candidate (Engine::time_reference_alone): a candidate beside it can slow it
// (on the H200 the ladder's softmax reference measured 38-39 us beside a 27 us candidate and 80 us
// beside a 1.5 ms one: docs/results.md, fifteenth session). Evaluations that found none stored yet
// (running in parallel) time it in pairs and offer theirs; the fastest median offered is kept, so no
// candidate can raise the reference time the others are compared with.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "eval/result.hpp"

namespace kernelrl::eval {

class RefTimingCache {
 public:
  std::optional<TimingSummary> find(const std::string& key) const;
  // Keeps `timing` when `key` has none yet or a slower median; returns whether it was kept.
  bool offer(const std::string& key, const TimingSummary& timing);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, TimingSummary> by_key_;
};

}  // namespace kernelrl::eval
