#include "eval/held_memory.hpp"

namespace kernelrl::eval {
namespace {

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::uint64_t held_memory_limit(std::uint64_t total_bytes, double limit_mb) {
  if (limit_mb > 0) return static_cast<std::uint64_t>(limit_mb * 1024.0 * 1024.0);
  return total_bytes / 4;
}

bool held_beyond(std::uint64_t free_before, std::uint64_t free_after, std::uint64_t limit_bytes) {
  return free_after < free_before && free_before - free_after > limit_bytes;
}

std::optional<std::string> held_memory_refusal(std::uint64_t free_before, std::uint64_t free_after,
                                               std::uint64_t free_confirmed, std::uint64_t limit_bytes) {
  if (!held_beyond(free_before, free_after, limit_bytes) || !held_beyond(free_before, free_confirmed, limit_bytes)) {
    return std::nullopt;
  }
  return "the candidate still held " + mib(free_before - free_confirmed) + " of device memory after its call returned (" +
         "limit " + mib(limit_bytes) + "): evaluations share the GPU; free what you allocate (outputs are " +
         "preallocated)";
}

}  // namespace kernelrl::eval
