#include "eval/child_task_confinement.hpp"

#include <cstdlib>
#include <filesystem>

#include "compile/read_roots.hpp"
#include "eval/runner_process.hpp"
#include "runner/confine.hpp"
#include "sandbox/confinement.hpp"
#include "task/python_runtime.hpp"

namespace kernelrl::eval {

namespace fs = std::filesystem;

namespace {

// CUDA's JIT cache (~/.nv): the CUDA driver reads and writes it, and makes it when it is missing,
// which it could not do once confined; made here first on a GPU.
std::vector<std::string> cuda_cache(bool cuda) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  const fs::path cache = fs::path(home) / ".nv";
  std::error_code ec;
  if (cuda) fs::create_directories(cache, ec);
  if (!fs::is_directory(cache, ec)) return {};
  return {cache.string()};
}

}  // namespace

common::Fallible confine_untrusted_task(const std::string& task_path, const ChildRequest& request) {
  const bool cuda = request.device == "cuda";
  const std::vector<std::string> cache = cuda_cache(cuda);
  std::vector<std::string> writable{fs::current_path().string()};
  for (const auto& device : sandbox::device_files_for_candidates(cuda).writable) writable.push_back(device);
  writable.insert(writable.end(), cache.begin(), cache.end());

  compile::ReadRootsInputs own;
  own.folders = {fs::path(task_path).parent_path().string()};
  if (!request.artifact.empty()) {  // a kernelbench candidate's cache entry, or a library in its entry
    std::error_code ec;
    const fs::path artifact = request.artifact;
    own.folders.push_back((fs::is_directory(artifact, ec) ? artifact : artifact.parent_path()).string());
  }
  if (const pid_t runner = runner_ahead_pid(); runner > 0) own.system = {"/proc/" + std::to_string(runner)};
  own.extra = cache;
  if (const char* home = std::getenv("HOME")) own.home = home;
  std::vector<std::string> readable = runner::readable_roots(cuda, task::interpreter_paths());
  for (auto& root : compile::read_roots(own)) readable.push_back(std::move(root));

  if (auto confined = sandbox::confine_writes(writable); !confined) return confined;
  return sandbox::confine_reads(readable);
}

}  // namespace kernelrl::eval
