// A task folder's manifest.json: per task file its level, split, operator families, FLOPs and the
// minimum bytes any implementation must move (tasks/README.md). The engine derives a
// speed-of-light time from it on the current GPU (eval/speed_of_light.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::task {

struct ManifestEntry {
  std::string file;                   // task file name, e.g. "001_matmul_square.py"
  int level = 0;
  std::string split;                  // "train" or "test"
  std::vector<std::string> families;  // "matmul", "convolution", ...
  double flops = 0;
  double min_bytes = 0;
  std::string dtype;
  std::string note;
  // Smaller sizes of the task ("small" for CPU runs): per size, new values of the task file's
  // module-level integer constants (task/sizes.hpp). An empty map: the full size is small enough.
  std::map<std::string, std::map<std::string, std::int64_t>> sizes;
};

// One entry of a manifest's "tasks" list (`level` is the manifest's); errors start with `where`.
common::Expected<ManifestEntry> parse_manifest_entry(const nlohmann::json& j, int level, const std::string& where);
// The entry as it appears in a manifest's "tasks" list (without the manifest's level).
nlohmann::json manifest_entry_json(const ManifestEntry& e);

// Every entry of `manifest_file`. Errors name the file and the entry or field at fault.
common::Expected<std::vector<ManifestEntry>> read_manifest(const std::filesystem::path& manifest_file);

// The entry for `task_file` from manifest.json in its folder; nullopt when the folder has no
// manifest or the manifest does not list the file. A manifest that cannot be read is an Error.
common::Expected<std::optional<ManifestEntry>> manifest_entry_for(const std::filesystem::path& task_file);

}  // namespace kernelrl::task
