#include "common/format.hpp"

#include <cstdio>

namespace kernelrl::common {

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace kernelrl::common
