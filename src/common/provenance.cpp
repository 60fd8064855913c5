#include "common/provenance.hpp"

#include <cstdlib>

#include "common/subprocess.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::common {

namespace {
std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_commit() {
  if (const char* c = std::getenv("KERNELRL_COMMIT"); c && *c) return c;
  RunLimits limits;
  limits.wall_time = std::chrono::milliseconds(5000);
  auto head = run_process({"git", "-C", build::source_dir, "rev-parse", "--short=12", "HEAD"}, {}, {}, limits);
  if (!head || !head->ok()) return "unknown";
  std::string commit = trim(head->output);
  auto dirty = run_process({"git", "-C", build::source_dir, "status", "--porcelain", "--untracked-files=no"}, {},
                           {}, limits);
  if (dirty && dirty->ok() && !trim(dirty->output).empty()) commit += "-dirty";
  return commit;
}
}  // namespace

const std::string& project_commit() {
  static const std::string commit = read_commit();
  return commit;
}

}  // namespace kernelrl::common
