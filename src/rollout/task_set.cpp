#include "rollout/task_set.hpp"

#include <set>

#include "common/fs.hpp"
#include "eval/task_check.hpp"
#include "task/manifest.hpp"
#include "task/sizes.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using common::make_error;

namespace {

// Task files of one input: itself when it is a file, else the folder's *.py files.
common::Expected<std::vector<fs::path>> expand(const fs::path& input) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) return eval::find_task_files(input);
  if (!fs::is_regular_file(input, ec)) return make_error(input.string() + ": no such task file or folder");
  return std::vector<fs::path>{input};
}

}  // namespace

common::Expected<std::vector<RolloutTask>> load_tasks(const std::vector<fs::path>& inputs, const std::string& split,
                                                      const std::string& size) {
  std::vector<RolloutTask> tasks;
  std::set<std::string> ids;
  for (const auto& input : inputs) {
    auto files = expand(input);
    if (!files) return files.error();
    for (const auto& file : *files) {
      auto entry = task::manifest_entry_for(file);
      if (!entry) return entry.error();
      RolloutTask t;
      t.path = file;
      t.id = file.stem().string();
      if (*entry) {
        t.level = (*entry)->level;
        t.split = (*entry)->split;
      }
      if (split != "all" && t.split != split) continue;
      if (!ids.insert(t.id).second) {
        return make_error(file.string() + ": another task is also called '" + t.id +
                          "' (candidates are filed by task id; rename one or run them separately)");
      }
      auto sized = task::task_at_size(file, size, common::cache_root());
      if (!sized) return sized.error();
      t.path = sized->path;
      auto source = common::read_file(t.path, 1u << 20);
      if (!source) return source.error();
      t.source = std::move(*source);
      tasks.push_back(std::move(t));
    }
  }
  if (tasks.empty()) return make_error("no tasks found (split " + split + ")");
  return tasks;
}

}  // namespace kernelrl::rollout
