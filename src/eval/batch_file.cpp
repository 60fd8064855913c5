#include "eval/batch_file.hpp"

#include <sstream>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"

namespace kernelrl::eval {

namespace fs = std::filesystem;

namespace {

fs::path resolve(const std::string& p, const fs::path& batch_dir) {
  fs::path path(p);
  std::error_code ec;
  if (path.is_absolute() || fs::exists(path, ec)) return path;
  for (fs::path dir = fs::absolute(batch_dir, ec); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / path, ec)) return dir / path;
    if (dir == dir.parent_path()) break;
  }
  return path;
}

}  // namespace

common::Expected<std::vector<BatchEntry>> read_batch_file(const fs::path& path) {
  auto text = common::read_file(path);
  if (!text) return text.error();
  nlohmann::json entries = nlohmann::json::parse(*text, nullptr, false);
  if (entries.is_discarded()) {  // JSON lines
    entries = nlohmann::json::array();
    std::istringstream in(*text);
    std::string line;
    int n_line = 0;
    while (std::getline(in, line)) {
      ++n_line;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) {
        return common::make_error(path.string() + ":" + std::to_string(n_line) + ": not valid JSON");
      }
      entries.push_back(j);
    }
  }
  if (!entries.is_array()) return common::make_error(path.string() + ": expected a JSON list of entries");
  std::vector<BatchEntry> out;
  const fs::path dir = path.parent_path();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const std::string where = path.string() + ": entry " + std::to_string(i);
    if (!e.is_object()) return common::make_error(where + ": expected an object");
    for (const char* field : {"task", "candidate"}) {
      if (!e.contains(field) || !e[field].is_string()) {
        return common::make_error(where + ": missing string field \"" + field + "\"");
      }
    }
    BatchEntry b;
    b.job.task = resolve(e["task"].get<std::string>(), dir);
    b.job.candidate = resolve(e["candidate"].get<std::string>(), dir);
    if (e.contains("format")) {
      auto f = common::parse_format(e.value("format", ""));
      if (!f) return common::make_error(where + ": \"format\" must be native, host or kernelbench");
      b.job.format = f;
    }
    if (e.contains("device")) {
      std::string d = e.value("device", "");
      if (d != "cuda" && d != "cpu") return common::make_error(where + ": \"device\" must be cuda or cpu");
      b.device = d;
      b.job.device = d;
    }
    if (e.contains("rules")) {
      auto r = common::parse_rule_set(e["rules"].is_string() ? e["rules"].get<std::string>() : std::string());
      if (!r) return common::make_error(where + ": \"rules\" must be strict, kernelbench or observe");
      b.job.rules = r;
    }
    if (e.contains("expect")) {
      auto s = common::parse_status(e.value("expect", ""));
      if (!s) return common::make_error(where + ": \"expect\" is not a status name");
      b.expect = s;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace kernelrl::eval
