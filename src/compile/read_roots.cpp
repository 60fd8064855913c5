// read_roots: the folders and files a candidate's compile may read (compile/read_roots.hpp).
#include "compile/read_roots.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "common/subprocess.hpp"

namespace kernelrl::compile {

namespace {

namespace fs = std::filesystem;

// The real path of an existing `p`, or empty.
std::string real_path(const std::string& p) {
  if (p.empty() || p[0] != '/') return "";
  std::error_code ec;
  fs::path real = fs::canonical(p, ec);
  return ec ? std::string() : real.string();
}

bool is_below_or_same(const std::string& path, const std::string& folder) {
  if (folder == "/") return true;
  return path == folder || (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
                            path[folder.size()] == '/');
}

bool too_broad(const std::string& real, const std::string& home) {
  static const std::set<std::string> kBroad = {"/", "/etc", "/home", "/root", "/tmp", "/var", "/run", "/proc", "/sys", "/dev"};
  if (kBroad.count(real) != 0) return true;
  const std::string real_home = real_path(home);
  return !real_home.empty() && is_below_or_same(real_home, real);  // the home folder or one above it
}

}  // namespace

std::vector<std::string> read_roots(const ReadRootsInputs& in) {
  std::vector<std::string> found;
  auto keep = [&](const std::string& p) {
    if (std::string real = real_path(p); !real.empty()) found.push_back(real);
  };
  for (const auto& p : in.system) keep(p);
  for (const auto& tool : in.tools) {
    const std::string real = real_path(tool);
    if (real.empty()) continue;
    found.push_back(real);
    const fs::path bin = fs::path(real).parent_path();
    const std::string prefix = bin.parent_path().string();
    if (!too_broad(prefix, in.home)) {
      found.push_back(prefix);
    } else if (!too_broad(bin.string(), in.home)) {
      found.push_back(bin.string());
    }
  }
  for (const auto& p : in.helpers) keep(p);
  for (const auto& p : in.folders) {
    if (std::string real = real_path(p); !real.empty() && !too_broad(real, in.home)) found.push_back(real);
  }
  for (const auto& p : in.extra) keep(p);

  // Folders first, shortest first, so anything below a kept folder is dropped.
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  std::vector<std::string> roots;
  for (const auto& p : found) {
    const bool covered = std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
      std::error_code ec;
      return fs::is_directory(r, ec) && is_below_or_same(p, r);
    });
    if (!covered) roots.push_back(p);
  }
  return roots;
}

std::vector<std::string> python_paths(const std::string& python) {
  if (python.empty()) return {};
  // find_spec locates torch without importing it (seconds); sitecustomize may be a link into /etc.
  static constexpr const char* kScript =
      "import sys, importlib.util\n"
      "paths = [sys.prefix, sys.exec_prefix, sys.base_prefix] + [p for p in sys.path if p]\n"
      "for name in ('torch', 'sitecustomize', 'usercustomize'):\n"
      "    try:\n"
      "        spec = importlib.util.find_spec(name)\n"
      "    except Exception:\n"
      "        spec = None\n"
      "    if spec is None:\n"
      "        continue\n"
      "    if spec.origin:\n"
      "        paths.append(spec.origin)\n"
      "    paths.extend(spec.submodule_search_locations or [])\n"
      "print('\\n'.join(paths))\n";
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(20000);
  auto run = common::run_process({python, "-c", kScript}, {}, {}, limits);
  if (!run || !run->ok()) return {};
  std::vector<std::string> paths;
  std::string line;
  for (char c : run->output + "\n") {
    if (c != '\n') {
      line += c;
      continue;
    }
    if (!line.empty() && line[0] == '/') {
      // A module file counts by its folder; sitecustomize.py linked into /etc by its real file only.
      std::error_code ec;
      if (fs::is_regular_file(line, ec)) {
        const std::string real = real_path(line);
        const std::string folder = fs::path(line).parent_path().string();
        paths.push_back(folder);
        if (!real.empty() && fs::path(real).parent_path() != fs::path(folder)) paths.push_back(real);
      } else {
        paths.push_back(line);
      }
    }
    line.clear();
  }
  return paths;
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t colon = list.find(':', pos);
    if (colon == std::string::npos) colon = list.size();
    if (colon > pos) items.push_back(list.substr(pos, colon - pos));
    pos = colon + 1;
  }
  return items;
}

}  // namespace kernelrl::compile
