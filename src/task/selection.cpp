#include "task/selection.hpp"

#include <algorithm>
#include <set>

#include "common/fs.hpp"
#include "task/manifest.hpp"
#include "task/sizes.hpp"

namespace kernelrl::task {

namespace fs = std::filesystem;
using common::make_error;

bool is_task_file_name(const fs::path& file) {
  return file.extension() == ".py" && file.filename().string().rfind("_", 0) != 0;
}

common::Expected<std::vector<fs::path>> find_task_files(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(dir.string() + ": no such folder");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_task_file_name(entry.path())) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> evenly_spaced(const std::vector<fs::path>& files, std::size_t n) {
  if (n >= files.size() || n == 0) return files;
  std::vector<fs::path> picked;
  for (std::size_t i = 0; i < n; ++i) picked.push_back(files[n == 1 ? 0 : i * (files.size() - 1) / (n - 1)]);
  return picked;
}

namespace {

// Task files of one input: itself when it is a file, else the folder's task files.
common::Expected<std::vector<fs::path>> expand(const fs::path& input) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) return find_task_files(input);
  if (!fs::is_regular_file(input, ec)) return make_error(input.string() + ": no such task file or folder");
  return std::vector<fs::path>{input};
}

}  // namespace

common::Expected<std::vector<SelectedTask>> select_tasks(const std::vector<fs::path>& inputs, const std::string& split,
                                                         const std::string& size) {
  std::vector<SelectedTask> tasks;
  std::set<std::string> ids;
  for (const auto& input : inputs) {
    auto files = expand(input);
    if (!files) return files.error();
    for (const auto& file : *files) {
      auto entry = manifest_entry_for(file);
      if (!entry) return entry.error();
      SelectedTask t;
      t.given = file;
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
      auto sized = task_at_size(t.given, size, common::cache_root());
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

}  // namespace kernelrl::task
