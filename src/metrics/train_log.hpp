// Reads a training run's train_log.jsonl (written by `kernelrl train`, src/train/trainer.cpp): one
// JSON object per finished step, `step` plus namespaced numbers (`reward/mean`, `train/clip_frac`,
// ...). Every numeric key is kept under its own name, so keys a later trainer adds show up too.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::metrics {

// One training step's line.
struct TrainStep {
  int step = 0;                           // 1-based step number, from the line's `step`
  std::map<std::string, double> values;   // every other numeric key; null and non-numeric values are left out
};

struct TrainLog {
  std::filesystem::path path;
  std::vector<TrainStep> steps;       // ascending step, one per step number
  std::vector<std::string> keys;      // every key of `values` seen, in order of first appearance
  std::vector<std::string> warnings;  // recoverable oddities (truncated last line, repeated step)
};

// `run_dir`/train_log.jsonl.
std::filesystem::path train_log_path(const std::filesystem::path& run_dir);

// The step's value of `key`; none when its line lacks the key or holds null there.
std::optional<double> value_of(const TrainStep& step, const std::string& key);

// Reads every step line. A last line that is not a JSON object (a run killed mid-write) is skipped
// with a warning; such a line anywhere else, a missing or non-integer `step`, or an unreadable file
// is an Error naming file and line. A later line for the same step replaces the earlier one (a
// resumed run re-logs it), with a warning. An empty file gives no steps (the caller decides).
common::Expected<TrainLog> read_train_log(const std::filesystem::path& path);

}  // namespace kernelrl::metrics
