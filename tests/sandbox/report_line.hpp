// Test helper: what a child writes to its report pipe, one JSON line at a time.
#pragma once

#include <unistd.h>

#include <string>

namespace kernelrl::sandbox::testing {

inline void say(int fd, const std::string& line) {
  std::string s = line + "\n";
  ssize_t n = ::write(fd, s.data(), s.size());
  (void)n;
}

}  // namespace kernelrl::sandbox::testing
