// Task sizes: a task's manifest entry may name smaller sizes of it ("sizes": {"small": {"N": 512}},
// tasks/README.md), new values of the task file's module-level integer constants. A task at such
// a size is the same file with those constants replaced, written once into a cache folder beside
// a manifest.json of its own, so everything downstream (engine, prompts, trajectories, reports)
// sees an ordinary KernelBench task file. "full" is the file as shipped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "common/expected.hpp"
#include "task/manifest.hpp"

namespace kernelrl::task {

// `source` with each constant of `values` assigned its new value on its `NAME = <integer>` line
// at module level (a trailing comment kept), and a first comment line saying which size of the
// file (`display_path`'s name) this is. An Error names the file and a constant that has no such line or more
// than one.
common::Expected<std::string> resize_source(const std::string& source, const std::map<std::string, std::int64_t>& values,
                                            const std::string& display_path, const std::string& size);

// A task's text and manifest entry at a smaller size of that entry.
struct SizedSource {
  std::string source;   // the text with the size's constants (resize_source)
  ManifestEntry entry;  // the entry of that text: no FLOPs or bytes (speed of light is defined for the
                        // full size only), no sizes, a note naming the size and the task
};

// `source`, listed as `entry`, at `size`; nullopt when that is the text as it is ("full", or a size
// that changes nothing). Errors: "WHO has no size 'S' (its sizes: full, ...)" (`who` names the task
// where it is listed), or resize_source's, naming `display_path`. Shared by task_at_size and the
// service's jobs, which carry a task as text.
common::Expected<std::optional<SizedSource>> source_at_size(const std::string& source, const ManifestEntry& entry,
                                                            const std::string& size, const std::string& display_path,
                                                            const std::string& who);

struct SizedTask {
  std::filesystem::path path;  // the task file to evaluate
  bool resized = false;        // false: the file as given (size "full", or no smaller size needed)
  bool in_manifest = true;     // false: no manifest entry, so the task has only its own size
};

// `task_file` at `size`. "full", or a size whose entry changes nothing, is the file itself; a task
// without a manifest entry is itself too (in_manifest false); otherwise the resized copy, in
// cache_dir/tasks/SIZE/HASH/ with the task's name and a manifest.json listing its sized entry
// (source_at_size). Errors name the manifest and the size a listed task lacks, or the constant
// resize_source could not set.
common::Expected<SizedTask> task_at_size(const std::filesystem::path& task_file, const std::string& size,
                                         const std::filesystem::path& cache_dir);

}  // namespace kernelrl::task
