#include "solutions/solution_set.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"

namespace kernelrl::solutions {

namespace {

using common::make_error;
using nlohmann::json;

constexpr std::uint64_t kMaxSetBytes = 512ull << 20;
constexpr std::uint64_t kMaxSolutionBytes = 1ull << 20;

// A claimed speedup: a positive finite number (or null: none).
common::Expected<std::optional<double>> claim_of(const json& v, const std::string& where) {
  if (v.is_null()) return std::optional<double>{};
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
    return make_error(where + ": a claimed speedup must be a positive number, got " + v.dump().substr(0, 80));
  }
  return std::optional<double>{v.get<double>()};
}

common::Expected<std::optional<int>> int_field(const json& o, const char* key, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::optional<int>{};
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1000000) {
    return make_error(where + ": \"" + key + "\" must be a non-negative integer, got " + it->dump().substr(0, 80));
  }
  return std::optional<int>{it->get<int>()};
}

// One object of CUDA-L1's layout (or of a list in the same spirit: "code" for "custom_code",
// "speedup" for "score_default").
common::Expected<Solution> from_record(const json& o, const std::string& where) {
  if (!o.is_object()) return make_error(where + ": expected a JSON object, got " + std::string(o.type_name()));
  Solution s;
  s.origin = where;
  auto level = int_field(o, "level_id", where);
  if (!level) return level.error();
  auto task = int_field(o, "task_id", where);
  if (!task) return task.error();
  s.level = *level;
  s.task_id = *task;
  for (const char* key : {"custom_code", "code"}) {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) continue;
    if (!it->is_string()) return make_error(where + ": \"" + key + "\" must be a string (the solution's code) or null");
    s.code = it->get<std::string>();
    break;
  }
  for (const char* key : {"score_default", "speedup", "claimed_speedup"}) {
    if (!o.contains(key)) continue;
    auto claim = claim_of(o[key], where + ": \"" + key + "\"");
    if (!claim) return claim.error();
    s.claimed_speedup = *claim;
    break;
  }
  if (o.contains("name")) {
    if (!o["name"].is_string() || o["name"].get<std::string>().empty()) {
      return make_error(where + ": \"name\" must be a non-empty string");
    }
    s.name = o["name"];
  } else if (s.task_id) {
    s.name = (s.level ? "level" + std::to_string(*s.level) + "_" : std::string()) + "task" + std::to_string(*s.task_id);
  } else {
    return make_error(where + ": the entry names no task: give \"task_id\" (with \"level_id\") or \"name\"");
  }
  return s;
}

// A JSON object: task name -> code, or -> an object as from_record reads it.
common::Expected<std::vector<Solution>> from_map(const json& map, const std::string& file) {
  std::vector<Solution> out;
  for (const auto& [key, value] : map.items()) {
    const std::string where = file + "[\"" + key + "\"]";
    if (value.is_string()) {
      out.push_back(Solution{key, std::nullopt, std::nullopt, value.get<std::string>(), std::nullopt, where});
      continue;
    }
    json entry = value;
    if (entry.is_object() && !entry.contains("name")) entry["name"] = key;
    auto s = from_record(entry, where);
    if (!s) return s.error();
    out.push_back(std::move(*s));
  }
  return out;
}

common::Expected<std::vector<Solution>> from_file(const std::filesystem::path& path) {
  auto text = common::read_file(path, kMaxSetBytes);
  if (!text) return text.error();
  const std::string file = path.string();
  json whole = json::parse(*text, nullptr, false);
  if (!whole.is_discarded()) {
    // One object with a record's keys is JSON lines of one line; any other object is a map.
    const bool one_record = whole.is_object() && (whole.contains("custom_code") || whole.contains("task_id") ||
                                                  whole.contains("level_id"));
    if (one_record) {
      auto s = from_record(whole, file + ":1");
      if (!s) return s.error();
      return std::vector<Solution>{std::move(*s)};
    }
    if (whole.is_object()) return from_map(whole, file);
    if (!whole.is_array()) return make_error(file + ": expected a JSON object, a JSON list or JSON lines");
    std::vector<Solution> out;
    for (std::size_t i = 0; i < whole.size(); ++i) {
      auto s = from_record(whole[i], file + "[" + std::to_string(i) + "]");
      if (!s) return s.error();
      out.push_back(std::move(*s));
    }
    return out;
  }
  std::vector<Solution> out;  // JSON lines
  std::istringstream lines(*text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(n);
    json o = json::parse(line, nullptr, false);
    if (o.is_discarded()) return make_error(where + ": not a JSON object (the file is neither JSON nor JSON lines)");
    auto s = from_record(o, where);
    if (!s) return s.error();
    out.push_back(std::move(*s));
  }
  if (out.empty()) return make_error(file + ": no solutions in it");
  return out;
}

common::Expected<std::vector<Solution>> from_folder(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return make_error(dir.string() + ": no .py files in this folder (a solution set names one file per task)");
  std::vector<Solution> out;
  for (const auto& f : files) {
    auto code = common::read_file(f, kMaxSolutionBytes);
    if (!code) return code.error();
    out.push_back(Solution{f.stem().string(), std::nullopt, std::nullopt, *code, std::nullopt, f.string()});
  }
  return out;
}

// Claims file: {"NAME": speedup, ...}; every name must be a solution's.
common::Fallible apply_claims(std::vector<Solution>& set, const std::filesystem::path& path) {
  auto text = common::read_file(path, kMaxSetBytes);
  if (!text) return text.error();
  json claims = json::parse(*text, nullptr, false);
  if (!claims.is_object()) return make_error(path.string() + ": expected a JSON object {\"NAME\": speedup, ...}");
  std::map<std::string, Solution*> by_name;
  for (auto& s : set) by_name[s.name] = &s;
  for (const auto& [key, value] : claims.items()) {
    const auto it = by_name.find(key);
    if (it == by_name.end()) return make_error(path.string() + ": \"" + key + "\" names no solution of the set");
    auto claim = claim_of(value, path.string() + "[\"" + key + "\"]");
    if (!claim) return claim.error();
    it->second->claimed_speedup = *claim;
  }
  return common::Ok{};
}

}  // namespace

std::string file_name_for(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
  return out;
}

common::Expected<std::vector<Solution>> read_solution_set(const std::filesystem::path& path,
                                                          const std::optional<std::filesystem::path>& claims) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return make_error(path.string() + ": no such file or folder");
  const bool folder = std::filesystem::is_directory(path, ec);
  auto set = folder ? from_folder(path) : from_file(path);
  if (!set) return set.error();
  // Names become file names: two that would share one are told apart by their order.
  std::set<std::string> taken;
  for (auto& s : *set) {
    std::string name = s.name;
    for (int k = 2; !taken.insert(file_name_for(name)).second; ++k) name = s.name + "_" + std::to_string(k);
    s.name = name;
  }
  if (folder && std::filesystem::is_regular_file(path / "claims.json", ec)) {
    if (auto applied = apply_claims(*set, path / "claims.json"); !applied) return applied.error();
  }
  if (claims) {
    if (auto applied = apply_claims(*set, *claims); !applied) return applied.error();
  }
  return set;
}

}  // namespace kernelrl::solutions
