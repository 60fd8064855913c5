#include "task/manifest.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"

namespace kernelrl::task {

namespace fs = std::filesystem;

namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// "sizes": {SIZE: {CONSTANT: positive integer, ...}, ...}
common::Fallible parse_sizes(const nlohmann::json& j, const std::string& where, ManifestEntry& e) {
  if (!j.is_object()) return common::make_error(where + ": 'sizes' must be an object of sizes, e.g. {\"small\": {\"N\": 512}}");
  for (const auto& [size, constants] : j.items()) {
    const std::string field = where + ": 'sizes." + size + "'";
    if (!is_identifier(size) || size == "full") return common::make_error(field + ": a size is named by an identifier other than 'full'");
    if (!constants.is_object()) return common::make_error(field + " must be an object of constants, e.g. {\"N\": 512}");
    auto& values = e.sizes[size];
    for (const auto& [name, value] : constants.items()) {
      if (!is_identifier(name)) return common::make_error(field + ": '" + name + "' is not a Python name");
      if (!value.is_number_integer() || value.get<std::int64_t>() <= 0) {
        return common::make_error(where + ": 'sizes." + size + "." + name + "' must be a positive integer, got " + value.dump());
      }
      values[name] = value.get<std::int64_t>();
    }
  }
  return common::Ok{};
}

}  // namespace

common::Expected<ManifestEntry> parse_manifest_entry(const nlohmann::json& j, int level, const std::string& where) {
  ManifestEntry e;
  e.level = level;
  if (!j.is_object()) return common::make_error(where + ": not an object");
  for (const char* key : {"file", "split"}) {
    if (!j.contains(key) || !j[key].is_string()) return common::make_error(where + ": '" + key + "' must be a string");
  }
  for (const char* key : {"flops", "min_bytes"}) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0) {
      return common::make_error(where + ": '" + key + "' must be a non-negative number");
    }
  }
  e.file = j["file"].get<std::string>();
  e.split = j["split"].get<std::string>();
  if (e.split != "train" && e.split != "test") {
    return common::make_error(where + ": 'split' is '" + e.split + "', expected train or test");
  }
  e.flops = j["flops"].get<double>();
  e.min_bytes = j["min_bytes"].get<double>();
  if (j.contains("families")) {
    if (!j["families"].is_array()) return common::make_error(where + ": 'families' must be a list of strings");
    for (const auto& f : j["families"]) {
      if (!f.is_string()) return common::make_error(where + ": 'families' must be a list of strings");
      e.families.push_back(f.get<std::string>());
    }
  }
  e.dtype = j.value("dtype", std::string("float32"));
  e.note = j.value("note", std::string());
  if (j.contains("sizes")) {
    if (auto parsed = parse_sizes(j["sizes"], where, e); !parsed) return parsed.error();
  }
  return e;
}

nlohmann::json manifest_entry_json(const ManifestEntry& e) {
  return {{"file", e.file}, {"split", e.split},         {"families", e.families}, {"flops", e.flops},
          {"min_bytes", e.min_bytes}, {"dtype", e.dtype}, {"note", e.note}, {"sizes", e.sizes}};
}

common::Expected<std::vector<ManifestEntry>> read_manifest(const fs::path& manifest_file) {
  auto text = common::read_file(manifest_file, 16u << 20);
  if (!text) return text.error();
  const std::string name = manifest_file.string();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return common::make_error(name + ": not valid JSON");
  if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array()) {
    return common::make_error(name + ": expected {\"level\": N, \"tasks\": [...]}");
  }
  if (!j.contains("level") || !j["level"].is_number_integer()) return common::make_error(name + ": 'level' must be an integer");
  const int level = j["level"].get<int>();
  std::vector<ManifestEntry> entries;
  for (std::size_t i = 0; i < j["tasks"].size(); ++i) {
    const auto& t = j["tasks"][i];
    std::string where = name + ": tasks[" + std::to_string(i) + "]";
    if (t.is_object() && t.contains("file") && t["file"].is_string()) where += " (" + t["file"].get<std::string>() + ")";
    auto e = parse_manifest_entry(t, level, where);
    if (!e) return e.error();
    entries.push_back(std::move(*e));
  }
  return entries;
}

common::Expected<std::optional<ManifestEntry>> manifest_entry_for(const fs::path& task_file) {
  const fs::path manifest = task_file.parent_path() / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec)) return std::optional<ManifestEntry>{};
  auto entries = read_manifest(manifest);
  if (!entries) return entries.error();
  const std::string name = task_file.filename().string();
  for (auto& e : *entries) {
    if (e.file == name) return std::optional<ManifestEntry>{std::move(e)};
  }
  return std::optional<ManifestEntry>{};
}

}  // namespace kernelrl::task
