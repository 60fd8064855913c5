// Batch files: a JSON list (or JSON lines) of {"task": PATH, "candidate": PATH, "format"?: NAME,
// "device"?: "cuda"|"cpu", "rules"?: "strict"|"kernelbench", "expect"?: STATUS}; other keys are
// left to the file's other readers (a corpus's "covers", "kind"). Relative paths resolve against the current
// directory, then the batch file's folder and each folder above it (so a repository-relative
// path in a batch file works from anywhere).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "eval/engine.hpp"

namespace kernelrl::eval {

struct BatchEntry {
  EvalJob job;
  std::optional<std::string> device;          // the device the entry needs, if it says
  std::optional<common::Status> expect;       // the status it should get (ladders, fixtures)
};

// Reads and validates a batch file; errors name the file, the entry index and the field.
common::Expected<std::vector<BatchEntry>> read_batch_file(const std::filesystem::path& path);

}  // namespace kernelrl::eval
