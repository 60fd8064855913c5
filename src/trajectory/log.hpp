// trajectories.jsonl as the rollout writes it: one JSON line per finished turn or update, each
// appended whole and flushed at once so a killed run keeps every finished turn.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::trajectory {

class TrajectoryLog {
 public:
  // Opens `path` for appending, creating it. Errors name the path.
  static common::Expected<std::unique_ptr<TrajectoryLog>> open(const std::filesystem::path& path);
  ~TrajectoryLog();
  TrajectoryLog(const TrajectoryLog&) = delete;
  TrajectoryLog& operator=(const TrajectoryLog&) = delete;

  // Append one record as one line with a single write. Thread-safe. Errors name the path.
  common::Fallible append(const TurnRecord& record) { return append(to_json(record)); }
  common::Fallible append(const TurnUpdate& update) { return append(to_json(update)); }
  common::Fallible append(const nlohmann::json& line);

 private:
  TrajectoryLog(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace kernelrl::trajectory
