// The task sets `kernelrl serve` offers by path: each a named folder of KernelBench task files
// (`--tasks DIR` registers DIR under its folder name, `--tasks NAME=DIR` under NAME). A job names a
// task as "NAME/relative/path.py"; the front copies its text and manifest entry into the job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::service {

struct ResolvedTask {
  std::string name;        // "tasks/level1/002_relu.py"
  std::string source;      // the file's text
  nlohmann::json manifest; // {"level": N, "entry": {...}} from manifest.json beside it, or null
};

class TaskSets {
 public:
  // Registers "DIR" or "NAME=DIR"; an Error names the argument (missing folder, duplicate name).
  common::Fallible add(const std::string& arg);

  // The task "NAME/path.py". Errors (for the `field` named): no such set, a path leaving the set's
  // folder, no such file, a manifest that cannot be read.
  common::Expected<ResolvedTask> resolve(const std::string& path, const std::string& field) const;

  // {"task_sets": [{"name", "dir", "tasks": [{"task": "NAME/...", "level", "split", ...}]}]} (GET /v1/tasks).
  common::Expected<nlohmann::json> listing() const;

  bool empty() const { return sets_.empty(); }
  struct Set {
    std::string name;
    std::filesystem::path dir;  // canonical
  };
  const std::vector<Set>& sets() const { return sets_; }

 private:
  std::vector<Set> sets_;
};

}  // namespace kernelrl::service
