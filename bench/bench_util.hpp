// Small helpers the engine benches share: where the binary lies (the worker binary and the source
// tree are found from it) and numbers printed with a fixed count of digits.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace kernelrl::bench {

// The folder of the running executable.
inline std::string self_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return std::filesystem::path(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0)).parent_path().string();
}

inline std::string fmt(double v, int digits = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

}  // namespace kernelrl::bench
