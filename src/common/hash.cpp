#include "common/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>

namespace kernelrl::common {

std::string hash_hex(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return std::string(buf, 32);
}

}  // namespace kernelrl::common
