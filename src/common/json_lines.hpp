// Reading a JSON-lines file that a killed process may have left with a half-written last line
// (trajectories.jsonl, train_log.jsonl): blank lines are skipped; a line that is not a JSON object
// is an error naming FILE:LINE, unless it is the last line, which is skipped with a warning.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::common {

// Calls `visit` with each object line and its "FILE:LINE"; stops at the first Error `visit`
// returns. `what` names the kind of file in the error for a folder ("a trajectories file").
// Warnings (the forgiven last line) are appended to `warnings`. Json: nlohmann::json, or
// nlohmann::ordered_json where the keys' file order matters.
template <class Json = nlohmann::json>
Fallible for_each_json_line(const std::filesystem::path& path, const std::string& what,
                            const std::function<Fallible(const Json& line, const std::string& where)>& visit,
                            std::vector<std::string>& warnings) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return make_error(path.string() + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return make_error(path.string() + ": is a directory, not " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path.string() + ": cannot open: " + std::strerror(errno));
  std::optional<std::string> unparsed;  // "FILE:LINE: why" of a bad line, forgiven only if last
  std::string line;
  for (std::size_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (unparsed) return make_error(*unparsed);
    const std::string where = path.string() + ":" + std::to_string(line_no);
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      unparsed = where + ": not a JSON object";
      continue;
    }
    if (auto s = visit(j, where); !s) return s;
  }
  if (in.bad()) return make_error(path.string() + ": read failed: " + std::strerror(errno));
  if (unparsed) warnings.push_back(*unparsed + " (the last line; a run killed mid-write) - ignored");
  return Ok{};
}

}  // namespace kernelrl::common
