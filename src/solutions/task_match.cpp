#include "solutions/task_match.hpp"

#include <algorithm>
#include <cctype>

namespace kernelrl::solutions {

namespace {

// Leading decimal digits of `s` followed by '_' or the end ("003_softmax" -> 3), else nullopt.
std::optional<int> leading_number(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && i < 9 && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || (i < s.size() && s[i] != '_')) return std::nullopt;
  return std::stoi(s.substr(0, i));
}

// L of the last path component named levelL.
std::optional<int> level_of(const std::filesystem::path& relative) {
  std::optional<int> level;
  for (const auto& part : relative.parent_path()) {
    const std::string p = part.string();
    if (p.size() > 5 && p.rfind("level", 0) == 0 &&
        std::all_of(p.begin() + 5, p.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      level = std::stoi(p.substr(5, 6));
    }
  }
  return level;
}

}  // namespace

common::Expected<TaskIndex> TaskIndex::scan(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return common::make_error(dir.string() + ": not a folder of task files (--tasks)");
  TaskIndex index;
  index.dir_ = dir;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".py") continue;
    const std::filesystem::path rel = std::filesystem::relative(it->path(), dir);
    std::string relative = rel.string();
    relative.resize(relative.size() - 3);
    index.files_.push_back(Entry{it->path(), relative, level_of(rel), leading_number(it->path().stem().string())});
  }
  if (ec) return common::make_error(dir.string() + ": cannot list it: " + ec.message());
  if (index.files_.empty()) return common::make_error(dir.string() + ": no task files (.py) below this folder");
  std::sort(index.files_.begin(), index.files_.end(), [](const Entry& a, const Entry& b) { return a.relative < b.relative; });
  return index;
}

common::Expected<std::filesystem::path> TaskIndex::only(const std::vector<const Entry*>& hits, const std::string& what) const {
  if (hits.size() == 1) return hits.front()->path;
  if (hits.empty()) return common::make_error("no task in " + dir_.string() + " is " + what);
  std::string names;
  for (std::size_t i = 0; i < hits.size() && i < 4; ++i) names += (i ? ", " : "") + hits[i]->relative;
  return common::make_error(std::to_string(hits.size()) + " tasks in " + dir_.string() + " are " + what + " (" + names +
                            "): name the solution by its task's file");
}

common::Expected<std::filesystem::path> TaskIndex::find(const Solution& s) const {
  std::vector<const Entry*> hits;
  if (s.task_id) {
    for (const auto& e : files_) {
      if (e.number == s.task_id && (!s.level || e.level == s.level)) hits.push_back(&e);
    }
    return only(hits, (s.level ? "level " + std::to_string(*s.level) + " " : std::string()) + "task number " +
                          std::to_string(*s.task_id));
  }
  for (const auto& e : files_) {
    if (e.relative == s.name || e.path.stem().string() == s.name) hits.push_back(&e);
  }
  if (!hits.empty()) return only(hits, "named " + s.name);
  const auto number = leading_number(s.name);
  if (!number) return only(hits, "named " + s.name);
  for (const auto& e : files_) {
    if (e.number == number) hits.push_back(&e);
  }
  return only(hits, "task number " + std::to_string(*number) + " (from the name " + s.name + ")");
}

}  // namespace kernelrl::solutions
