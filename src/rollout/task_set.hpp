// The tasks of a rollout: task files given directly or found in folders, filtered by the split
// their folder's manifest.json gives them, each with the source text its prompts show.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::rollout {

struct RolloutTask {
  std::filesystem::path path;        // as given, or as found under a given folder; a sized copy (task_size)
  std::string id;                    // file name without .py; names the task's candidates folder
  std::optional<int> level;          // from the manifest; none when the task has no entry
  std::optional<std::string> split;  // "train" / "test" from the manifest
  std::string source;                // the task file's text
};

// Every task of `inputs` (files, or folders searched recursively) whose split passes `split`
// ("all" keeps tasks without a manifest entry too), in the order given, each folder's files
// sorted, at `size` (task/sizes.hpp: path and source are the sized copy's; a task without a
// manifest entry keeps its own size). Errors name the missing file or folder, an unreadable
// manifest, a size a listed task lacks, two tasks sharing an id, or a selection that is empty.
common::Expected<std::vector<RolloutTask>> load_tasks(const std::vector<std::filesystem::path>& inputs,
                                                      const std::string& split, const std::string& size = "full");

}  // namespace kernelrl::rollout
