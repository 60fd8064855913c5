// Reading trajectories.jsonl back: every full record with the later update records applied. Two
// ways in: the report's read-only one, which forgives a last line a kill cut short, and the
// resuming rollout's, which also repairs the file's end so that appended lines start clean.
// Records of earlier versions (fields absent, docs/trajectories.md) are read as well.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::trajectory {

struct TrajectoryFile {
  std::filesystem::path path;
  std::vector<TurnRecord> records;    // in file order of first appearance, updates applied
  std::vector<std::string> warnings;  // recoverable oddities (cut last line, repeated turn)
  bool dropped_partial_line = false;  // resume only: a line cut off by a kill was removed from the file
};

// What of each record to keep: all of it, or all but the prompt and the response (a report over a
// large run need not hold every prompt in memory).
enum class Detail { FULL, WITHOUT_TEXT };

// The file's name in a run directory.
inline constexpr const char* kFileName = "trajectories.jsonl";

// `path` itself when it is a file; `path`/trajectories.jsonl when it is a run directory.
std::filesystem::path trajectory_file_path(const std::filesystem::path& run_dir_or_jsonl);

// Reads every record of `path` and applies the update records in order. A last line that is not
// JSON (a run killed mid-write) is skipped with a warning; bad JSON or a bad field on any other
// line, an update for a turn not seen before, a missing or unreadable file is an Error naming
// FILE:LINE. A second full record for the same (task, trajectory, turn) replaces the first, with a
// warning.
common::Expected<TrajectoryFile> read_trajectory_file(const std::filesystem::path& path, Detail detail = Detail::FULL);

// The same for resuming a run: a missing file holds no records, and the file's end is repaired: a
// last line without its newline is kept (newline added) when it is a whole JSON object, else cut
// off (dropped_partial_line).
common::Expected<TrajectoryFile> load_and_repair(const std::filesystem::path& path);

}  // namespace kernelrl::trajectory
