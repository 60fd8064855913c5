#include "task/sizes.hpp"

#include <cctype>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "task/manifest.hpp"

namespace kernelrl::task {

namespace fs = std::filesystem;
using common::make_error;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The part of a module-level line `NAME = rest` after the '=', when the line assigns `name`.
std::optional<std::string> assigned_value(const std::string& line, const std::string& name) {
  if (line.compare(0, name.size(), name) != 0) return std::nullopt;
  std::size_t p = name.size();
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (p >= line.size() || line[p] != '=' || (p + 1 < line.size() && line[p + 1] == '=')) return std::nullopt;
  return line.substr(p + 1);
}

// An integer literal (digits and underscores) with an optional trailing comment: the literal and
// what follows it, or nullopt.
std::optional<std::pair<std::string, std::string>> integer_literal(const std::string& rest) {
  std::size_t b = 0;
  while (b < rest.size() && (rest[b] == ' ' || rest[b] == '\t')) ++b;
  std::size_t e = b;
  while (e < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[e])) || rest[e] == '_')) ++e;
  if (e == b) return std::nullopt;
  std::size_t t = e;
  while (t < rest.size() && (rest[t] == ' ' || rest[t] == '\t')) ++t;
  if (t < rest.size() && rest[t] != '#') return std::nullopt;
  return std::make_pair(rest.substr(b, e - b), rest.substr(e));
}

}  // namespace

common::Expected<std::string> resize_source(const std::string& source, const std::map<std::string, std::int64_t>& values,
                                            const std::string& display_path, const std::string& size) {
  std::vector<std::string> lines = split_lines(source);
  std::string changes;
  for (const auto& [name, value] : values) {
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (assigned_value(lines[i], name)) at.push_back(i);
    }
    if (at.size() != 1) {
      return make_error(display_path + ": size '" + size + "' sets " + name + ", but the file has " +
                        (at.empty() ? "no" : std::to_string(at.size())) + " module-level `" + name +
                        " = ...` line" + (at.empty() ? "" : "s") + " (it needs exactly one `" + name + " = <integer>`)");
    }
    std::string& line = lines[at.front()];
    auto literal = integer_literal(*assigned_value(line, name));
    if (!literal) {
      return make_error(display_path + ":" + std::to_string(at.front() + 1) + ": size '" + size + "' sets " + name +
                        ", but `" + line + "` does not assign it an integer literal");
    }
    changes += (changes.empty() ? "" : ", ") + name + " = " + std::to_string(value) + " (full: " + literal->first + ")";
    line = name + " = " + std::to_string(value) + literal->second;
  }
  // The file's name only: the line reaches prompts, which should not depend on where a checkout is.
  std::string out = "# kernelrl: size '" + size + "' of " + fs::path(display_path).filename().string() + ": " + changes + "\n";
  for (const auto& line : lines) out += line + "\n";
  return out;
}

common::Expected<std::optional<SizedSource>> source_at_size(const std::string& source, const ManifestEntry& entry,
                                                            const std::string& size, const std::string& display_path,
                                                            const std::string& who) {
  if (size == "full") return std::optional<SizedSource>{};
  auto it = entry.sizes.find(size);
  if (it == entry.sizes.end()) {
    std::string known = "full";
    for (const auto& [name, values] : entry.sizes) known += ", " + name;
    return make_error(who + " has no size '" + size + "' (its sizes: " + known + ")");
  }
  if (it->second.empty()) return std::optional<SizedSource>{};
  auto resized = resize_source(source, it->second, display_path, size);
  if (!resized) return resized.error();
  SizedSource sized{std::move(*resized), entry};
  sized.entry.flops = 0;
  sized.entry.min_bytes = 0;
  sized.entry.sizes.clear();
  sized.entry.note = "size '" + size + "' of " + display_path;
  return std::optional<SizedSource>{std::move(sized)};
}

common::Expected<SizedTask> task_at_size(const fs::path& task_file, const std::string& size, const fs::path& cache_dir) {
  if (size == "full") return SizedTask{task_file, false, true};
  auto entry = manifest_entry_for(task_file);
  if (!entry) return entry.error();
  if (!*entry) return SizedTask{task_file, false, false};
  const ManifestEntry& e = **entry;
  auto source = common::read_file(task_file, 16u << 20);
  if (!source) return source.error();
  auto sized = source_at_size(*source, e, size, task_file.string(),
                              (task_file.parent_path() / "manifest.json").string() + ": " + e.file);
  if (!sized) return sized.error();
  if (!*sized) return SizedTask{task_file, false, true};
  const std::string& resized = (*sized)->source;

  const fs::path dir = cache_dir / "tasks" / size / common::hash_hex(resized).substr(0, 16);
  const fs::path file = dir / task_file.filename();
  auto existing = common::read_file(file, 16u << 20);
  if (existing && *existing == resized) return SizedTask{file, true, true};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(dir.string() + ": cannot create the folder for sized tasks: " + ec.message());
  // Its own manifest, listing the sized entry (level, split and families as listed).
  const nlohmann::json manifest = {{"level", e.level}, {"tasks", {manifest_entry_json((*sized)->entry)}}};
  if (auto w = common::write_file_atomic(dir / "manifest.json", manifest.dump(2) + "\n"); !w) return w.error();
  if (auto w = common::write_file_atomic(file, resized); !w) return w.error();
  return SizedTask{file, true, true};
}

}  // namespace kernelrl::task
