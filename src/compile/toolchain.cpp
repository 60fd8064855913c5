// detect_toolchain: which nvcc, C++ compiler and Python build candidates, and their versions. The
// result is part of every cache key, so a toolkit upgrade never serves a stale binary.
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/subprocess.hpp"
#include "compile/compiler.hpp"
#include "compile/read_roots.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::compile {

namespace {

namespace fs = std::filesystem;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// `name` itself if it holds a slash, else its first match on $PATH; empty if nothing runnable.
std::string resolve_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
  std::string path = env_or_empty("PATH");
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t colon = path.find(':', pos);
    if (colon == std::string::npos) colon = path.size();
    fs::path dir = path.substr(pos, colon - pos);
    if (dir.empty()) dir = ".";
    if (is_executable_file(dir / name)) return (dir / name).string();
    pos = colon + 1;
  }
  return "";
}

// Output of `program --version`, or empty if it does not run.
std::string version_output(const std::string& program) {
  common::RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(20000);
  auto run = common::run_process({program, "--version"}, {}, {}, limits);
  if (!run.ok() || !run->ok()) return "";
  return run->output;
}

// "13.0.88" from "Cuda compilation tools, release 13.0, V13.0.88".
std::string parse_nvcc_version(const std::string& text) {
  for (std::size_t p = text.find('V'); p != std::string::npos; p = text.find('V', p + 1)) {
    std::size_t end = p + 1;
    int dots = 0;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
      dots += text[end] == '.';
      ++end;
    }
    if (dots >= 2 && (p == 0 || text[p - 1] == ' ' || text[p - 1] == '\n')) return text.substr(p + 1, end - p - 1);
  }
  std::size_t rel = text.find("release ");
  if (rel == std::string::npos) return "";
  std::size_t end = text.find_first_of(",\n", rel);
  return text.substr(rel + 8, end == std::string::npos ? std::string::npos : end - rel - 8);
}

}  // namespace

common::Expected<Toolchain> detect_toolchain() {
  Toolchain tc;
  if (std::string from_env = env_or_empty("KERNELRL_NVCC"); !from_env.empty()) {
    tc.nvcc = resolve_program(from_env);
    if (tc.nvcc.empty()) tc.nvcc = from_env;  // kept so native compiles can name it in their error
  } else if (is_executable_file(build::nvcc_executable)) {
    tc.nvcc = build::nvcc_executable;
  } else {
    tc.nvcc = resolve_program("nvcc");
  }
  if (!tc.nvcc.empty()) tc.nvcc_version = parse_nvcc_version(version_output(tc.nvcc));

  std::string cxx_name = env_or_empty("CXX");
  const char* cxx_origin = "$CXX";
  if (cxx_name.empty()) {
    cxx_name = build::cxx_compiler;
    cxx_origin = "the configured C++ compiler";
  }
  tc.cxx = resolve_program(cxx_name);
  if (tc.cxx.empty()) {
    return common::make_error("C++ compiler '" + cxx_name + "' (" + cxx_origin +
                              ") not found or not executable: set $CXX to a g++ or clang++");
  }
  std::string cxx_out = version_output(tc.cxx);
  if (cxx_out.empty()) return common::make_error("C++ compiler '" + tc.cxx + "' does not run (`" + tc.cxx + " --version` failed)");
  tc.cxx_version = cxx_out.substr(0, cxx_out.find('\n'));

  // nvcc compiles host code with the gcc first on PATH; its objects link with the matching g++.
  tc.cuda_host_cxx = resolve_program("g++");
  if (tc.cuda_host_cxx.empty()) tc.cuda_host_cxx = tc.cxx;
  tc.cuda_host_cc = resolve_program("gcc");
  if (!tc.cuda_host_cc.empty() && is_executable_file(build::host_cc_wrapper)) tc.host_cc_wrapper = build::host_cc_wrapper;
  if (is_executable_file(build::confine_tool)) tc.confine = build::confine_tool;
  if (!resolve_program("ld.gold").empty()) tc.fast_linker = "-fuse-ld=gold";  // links native candidates faster

  tc.python = build::python_executable;
  tc.abi_include_dir = build::abi_include_dir;

  ReadRootsInputs roots;
  roots.system = kSystemReadRoots;
  roots.system.insert(roots.system.end(), kSystemReadFiles.begin(), kSystemReadFiles.end());
  roots.tools = {tc.nvcc, tc.cxx, tc.cuda_host_cxx, tc.cuda_host_cc};
  // What the build starts by name (torch's load_inline runs ninja and c++; nvcc's script sh).
  for (const char* helper : {"ninja", "c++", "cc", "sh", "env", "as", "ld", "ld.gold"}) {
    roots.helpers.push_back(resolve_program(helper));
  }
  roots.helpers.push_back(tc.host_cc_wrapper);
  roots.folders = {tc.abi_include_dir.string(), build::compile_shim_dir};
  roots.extra = split_path_list(env_or_empty("KERNELRL_COMPILE_READ_ROOTS"));
  roots.home = env_or_empty("HOME");
  tc.read_roots = read_roots(roots);
  roots.tools.push_back(tc.python);
  roots.folders = python_paths(tc.python);
  roots.folders.insert(roots.folders.begin(), {tc.abi_include_dir.string(), build::compile_shim_dir});
  tc.python_read_roots = read_roots(roots);
  return tc;
}

}  // namespace kernelrl::compile
