// A host runner's ARM (eval/host_runner.hpp, and a kernelbench runner on the CPU): evicts this core's
// private caches (and its TLB's reach) before a timed call, as the child's timer does for its own
// core before the reference's: twice the L2, by one write per line.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <vector>

namespace kernelrl::runner {

class CacheSweep {
 public:
  static void run(void* self) { static_cast<CacheSweep*>(self)->sweep(); }
  void sweep() {
    if (buffer_.empty()) {
      long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
      buffer_.assign(static_cast<std::size_t>(2 * (l2 > 0 ? l2 : 1l << 20)), 0);
    }
    for (std::size_t i = 0; i < buffer_.size(); i += 64) buffer_[i] = static_cast<char>(buffer_[i] + 1);
    sink_ = buffer_[buffer_.size() / 2];
  }

 private:
  std::vector<char> buffer_;
  volatile char sink_ = 0;
};

}  // namespace kernelrl::runner
