// Device memory a candidate keeps after its call returns. Evaluations share the GPU (several
// workers' children at once): a candidate that allocates most of the device and never frees it
// makes the others run out of memory. The child reads the device's free memory right before and
// right after each correctness trial's call (outputs are preallocated, so a native candidate needs
// none of its own beyond scratch it frees); a drop beyond the limit is REJECTED. Free memory is
// device-wide, so other processes' allocations in that window count too: the limit sits far above
// them (a quarter of the device by default), and a drop beyond it is read again after
// kConfirmDelay, by which time memory another evaluation took for a moment (a memory bomb that
// frees on failure) is back.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kernelrl::eval {

inline constexpr std::chrono::milliseconds kConfirmDelay{200};

// The most a call may keep: `limit_mb` when > 0, else a quarter of `total_bytes`.
std::uint64_t held_memory_limit(std::uint64_t total_bytes, double limit_mb);

// Whether the free memory read after the call is more than `limit_bytes` below the one before.
bool held_beyond(std::uint64_t free_before, std::uint64_t free_after, std::uint64_t limit_bytes);

// Why the call is refused (a message a model can act on), or nullopt: only when the reading after
// the call and the one kConfirmDelay later are both beyond the limit (the message gives the later).
std::optional<std::string> held_memory_refusal(std::uint64_t free_before, std::uint64_t free_after,
                                               std::uint64_t free_confirmed, std::uint64_t limit_bytes);

}  // namespace kernelrl::eval
