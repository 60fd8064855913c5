#include "service/task_sets.hpp"

#include <map>

#include "common/fs.hpp"
#include "task/selection.hpp"
#include "task/manifest.hpp"

namespace kernelrl::service {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxTaskBytes = 16u << 20;

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q) {
    if (q == p.end() || *r != *q) return false;
  }
  return true;
}

nlohmann::json manifest_json(const std::optional<task::ManifestEntry>& entry) {
  if (!entry) return nullptr;
  return {{"level", entry->level}, {"entry", task::manifest_entry_json(*entry)}};
}

}  // namespace

common::Fallible TaskSets::add(const std::string& arg) {
  std::string name, dir = arg;
  if (auto eq = arg.find('='); eq != std::string::npos) {
    name = arg.substr(0, eq);
    dir = arg.substr(eq + 1);
  }
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(canonical, ec)) return common::make_error("--tasks: '" + dir + "' is not a folder");
  if (name.empty()) name = canonical.filename().string();
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return common::make_error("--tasks: '" + arg + "': a task set name is one path component, e.g. tasks=DIR");
  }
  for (const auto& s : sets_) {
    if (s.name == name) return common::make_error("--tasks: two task sets named '" + name + "' (use NAME=DIR)");
  }
  sets_.push_back({name, canonical});
  return common::Ok{};
}

common::Expected<ResolvedTask> TaskSets::resolve(const std::string& path, const std::string& field) const {
  const auto slash = path.find('/');
  const std::string set_name = path.substr(0, slash);
  const Set* set = nullptr;
  for (const auto& s : sets_) {
    if (s.name == set_name) set = &s;
  }
  if (!set) {
    std::string names;
    for (const auto& s : sets_) names += (names.empty() ? "" : ", ") + s.name;
    return common::make_error(field + ": '" + path + "' is not in a task set of this service (task sets: " +
                              (names.empty() ? "none; start `kernelrl serve` with --tasks DIR" : names) +
                              "; or send the task's text as task_source)");
  }
  if (slash == std::string::npos || slash + 1 == path.size()) {
    return common::make_error(field + ": '" + path + "' names a task set, not a task file in it");
  }
  const fs::path relative(path.substr(slash + 1));
  for (const auto& part : relative) {
    if (part == "..") return common::make_error(field + ": '" + path + "' leaves its task set's folder");
  }
  std::error_code ec;
  const fs::path file = fs::weakly_canonical(set->dir / relative, ec);
  if (ec || !inside(set->dir, file)) return common::make_error(field + ": '" + path + "' leaves its task set's folder");
  if (!fs::is_regular_file(file, ec)) return common::make_error(field + ": '" + path + "': no such task file");
  if (!task::is_task_file_name(file)) {
    return common::make_error(field + ": '" + path + "' is not a task file (a .py file whose name does not start with "
                              "_; GET /v1/tasks lists them)");
  }
  auto source = common::read_file(file, kMaxTaskBytes);
  if (!source) return common::make_error(field + ": " + source.error().message);
  auto entry = task::manifest_entry_for(file);
  if (!entry) return common::make_error(field + ": " + entry.error().message);
  return ResolvedTask{path, std::move(*source), manifest_json(*entry)};
}

common::Expected<nlohmann::json> TaskSets::listing() const {
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& s : sets_) {
    auto files = task::find_task_files(s.dir);
    if (!files) return files.error();
    std::map<fs::path, std::vector<task::ManifestEntry>> manifests;  // one read per folder
    std::map<fs::path, std::string> manifest_errors;
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& f : *files) {
      const fs::path folder = f.parent_path();
      if (!manifests.count(folder)) {
        std::error_code ec;
        auto entries = fs::is_regular_file(folder / "manifest.json", ec) ? task::read_manifest(folder / "manifest.json")
                                                                        : std::vector<task::ManifestEntry>{};
        // A manifest that cannot be read costs its folder's details, not the listing.
        if (!entries) manifest_errors[folder] = entries.error().message;
        manifests[folder] = entries ? std::move(*entries) : std::vector<task::ManifestEntry>{};
      }
      nlohmann::json t = {{"task", s.name + "/" + fs::relative(f, s.dir).generic_string()}};
      if (manifest_errors.count(folder)) t["manifest_error"] = manifest_errors[folder];
      for (const auto& e : manifests[folder]) {
        if (e.file != f.filename().string()) continue;
        t["level"] = e.level;
        t["split"] = e.split;
        t["families"] = e.families;
        t["flops"] = e.flops;
        t["min_bytes"] = e.min_bytes;
      }
      tasks.push_back(std::move(t));
    }
    sets.push_back({{"name", s.name}, {"dir", s.dir.string()}, {"n_tasks", tasks.size()}, {"tasks", std::move(tasks)}});
  }
  return nlohmann::json{{"task_sets", std::move(sets)}};
}

}  // namespace kernelrl::service
