#include "runner/confine.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "compile/read_roots.hpp"
#include "runner/runner_start.hpp"
#include "sandbox/confinement.hpp"
#include "sandbox/syscall_filter.hpp"

namespace kernelrl::runner {

namespace {

constexpr std::uint64_t kHostMemoryHeadroomBytes = 8ull << 30;

// One layer's outcome in the report: `name` true, or false with `name`_error.
void record(nlohmann::json& report, const std::string& name, const common::Fallible& outcome) {
  report[name] = static_cast<bool>(outcome);
  if (!outcome) report[name + "_error"] = outcome.error().message;
}

}  // namespace

std::vector<std::string> readable_roots(bool cuda, const std::vector<std::string>& interpreter_paths) {
  compile::ReadRootsInputs in;
  in.system = compile::kSystemReadRoots;
  in.system.insert(in.system.end(), compile::kSystemReadFiles.begin(), compile::kSystemReadFiles.end());
  // This process's own /proc entry (the CUDA driver and torch read their own maps and status).
  in.system.push_back("/proc/" + std::to_string(::getpid()));
  for (const auto& f : sandbox::device_files_for_candidates(cuda).readable) in.system.push_back(f);
  in.folders = interpreter_paths;
  // The evaluating child's scratch folder, kept as given: it may sit below /tmp.
  std::error_code ec;
  in.extra = {std::filesystem::current_path(ec).string()};
  if (const char* home = std::getenv("HOME")) in.home = home;
  return compile::read_roots(in);
}

nlohmann::json confine_files_at_start(bool cuda, const std::vector<std::string>& interpreter_paths) {
  nlohmann::json report = nlohmann::json::object();
  record(report, "file_confinement",
         sandbox::confine_files(readable_roots(cuda, interpreter_paths), sandbox::device_files_for_candidates(cuda).writable));
  return report;
}

nlohmann::json confine_calls(bool limit_address_space) {
  nlohmann::json report = nlohmann::json::object();
  record(report, "file_size_limit", sandbox::limit_file_size(true));
  if (limit_address_space) {
    auto limit = sandbox::limit_address_space_growth(kHostMemoryHeadroomBytes);
    if (limit) {
      report["address_space_limit_bytes"] = *limit;
    } else {
      report["address_space_limit_error"] = limit.error().message;
    }
  }
  record(report, "capabilities_dropped", sandbox::drop_capabilities());
  sandbox::RunnerFilterOptions filter;
  filter.image_end = program_image_end();
  record(report, "syscall_filter", sandbox::install_runner_filter(filter));
  report["image_end"] = filter.image_end;
  return report;
}

}  // namespace kernelrl::runner
