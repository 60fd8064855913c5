// Wall time of a phase, in seconds, on the monotonic clock.
#pragma once

#include <chrono>

namespace kernelrl::common {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kernelrl::common
