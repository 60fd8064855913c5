// A run's trajectories.jsonl as the rollout writes it: one JSON line per finished turn or update,
// each appended whole and flushed at once so a killed run keeps every finished turn; and the
// records an earlier run left, for resuming.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::rollout {

struct LoadedLog {
  std::vector<nlohmann::json> records;  // every whole line, in file order
  bool dropped_partial_line = false;    // a line cut off by a kill was removed from the file
};

// Reads `path` (a missing file holds no records) and repairs its end: a last line without its
// newline is kept (newline added) when it is a whole JSON object, else cut off, so appended lines
// start clean. An unparsable line before the end is an Error naming file and line.
common::Expected<LoadedLog> load_and_repair(const std::filesystem::path& path);

class TrajectoryLog {
 public:
  // Opens `path` for appending, creating it. Errors name the path.
  static common::Expected<std::unique_ptr<TrajectoryLog>> open(const std::filesystem::path& path);
  ~TrajectoryLog();
  TrajectoryLog(const TrajectoryLog&) = delete;
  TrajectoryLog& operator=(const TrajectoryLog&) = delete;

  // Appends `record` as one line with a single write. Thread-safe. Errors name the path.
  common::Fallible append(const nlohmann::json& record);

 private:
  TrajectoryLog(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace kernelrl::rollout
