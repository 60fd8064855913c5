#include "common/gpu_list.hpp"

#include <cstdlib>
#include <filesystem>
#include <set>

namespace kernelrl::common {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    const std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Expected<std::vector<std::string>> resolve_gpus(const std::string& spec) {
  if (spec == "all") {
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) return split_commas(visible);
    std::vector<std::string> ids;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ids.push_back(std::to_string(ids.size()));
    }
    return ids;
  }
  auto ids = split_commas(spec);
  if (ids.empty()) return make_error("--gpus: '" + spec + "' names no GPU; give all or a list such as 0,1");
  std::set<std::string> seen;
  for (const auto& id : ids) {
    const bool number = id.find_first_not_of("0123456789") == std::string::npos;
    const bool uuid = id.rfind("GPU-", 0) == 0 || id.rfind("MIG-", 0) == 0;
    if (!number && !uuid) return make_error("--gpus: '" + id + "' is not a GPU index (0, 1, ...) or a GPU-/MIG- UUID");
    if (!seen.insert(id).second) {
      return make_error("--gpus: '" + id + "' is listed twice (two users of one GPU would time each other's kernels)");
    }
  }
  return ids;
}

}  // namespace kernelrl::common
