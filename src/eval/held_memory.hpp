// Device memory a candidate keeps after its call returns. Evaluations share the GPU (several
// workers' children at once): a candidate that allocates most of the device and never frees it
// makes the others run out of memory. The child reads the device's free memory right before and
// right after each correctness trial's call (outputs are preallocated, so a native candidate needs
// none of its own beyond scratch it frees); a drop beyond the limit is REJECTED. Free memory is
// device-wide, so other processes' allocations in that window count too: the limit sits far above
// them (a quarter of the device by default).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kernelrl::eval {

// The most a call may keep: `limit_mb` when > 0, else a quarter of `total_bytes`.
std::uint64_t held_memory_limit(std::uint64_t total_bytes, double limit_mb);

// Why the call is refused (a message a model can act on), or nullopt.
std::optional<std::string> held_memory_refusal(std::uint64_t free_before, std::uint64_t free_after,
                                               std::uint64_t limit_bytes);

}  // namespace kernelrl::eval
