// Reads a rollout's trajectories.jsonl (docs/trajectories.md) into the few fields the metrics use.
// Streams line by line, so files with full prompts and responses of any size are fine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::metrics {

// One finished turn, after any later "update": true record for it has been applied.
struct TurnRecord {
  std::string task;                  // task file path as given (the grouping key)
  std::string task_id;               // file name without .py; from `task` when the record lacks it
  std::optional<int> level;          // from the task manifest; none when null or absent
  std::optional<std::string> split;  // "train" / "test"; none when null or absent
  int trajectory = 0;                // 0-based index within the task
  int turn = 1;                      // 1-based index within the trajectory
  bool correct = false;
  std::optional<double> speedup;     // reference / candidate median time; none when not timed
  std::optional<double> return_;     // discounted return; none until the task's group completed
  std::optional<double> advantage;   // none until the task's group completed
  // For the report's drill-down: what was tried and what came back.
  std::string code;                  // the parsed kernel; empty after a parse error
  std::string status;                // the engine's status, or PARSE_ERROR / POLICY_ERROR / "" when none
  std::string feedback;              // the error message, parse error or policy error; empty when correct
  double score = 0;
};

struct TrajectoryFile {
  std::filesystem::path path;
  std::vector<TurnRecord> records;    // in file order of first appearance
  std::vector<std::string> warnings;  // recoverable oddities (truncated last line, repeated turn)
};

// `path` itself when it is a file; `path`/trajectories.jsonl when it is a run directory.
std::filesystem::path trajectory_file_path(const std::filesystem::path& run_dir_or_jsonl);

// Reads every turn record and applies update records in order. A last line that is not valid JSON
// (a run killed mid-write) is skipped with a warning; bad JSON or a missing field on any other
// line, an update for a turn not seen before, or an unreadable file is an Error naming file and line.
// A second full record for the same (task, trajectory, turn) replaces the first, with a warning.
common::Expected<TrajectoryFile> read_trajectory_file(const std::filesystem::path& path);

}  // namespace kernelrl::metrics
