#include "common/hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <vector>

namespace kernelrl::common {

namespace {

std::string hex_of(XXH128_hash_t h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return std::string(buf, 32);
}

}  // namespace

std::string hash_hex(std::string_view data) { return hex_of(XXH3_128bits(data.data(), data.size())); }

std::string hash_file_hex(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  std::vector<char> buf(1 << 20);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) XXH3_128bits_update(&state, buf.data(), n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok ? hex_of(XXH3_128bits_digest(&state)) : "";
}

}  // namespace kernelrl::common
