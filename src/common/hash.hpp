// Content hashes for the compile cache and task identity (XXH3-128, hex). Not cryptographic: the
// cache stores the full key beside each entry and compares it on a hit, so a collision cannot
// hand one candidate another's binary.
#pragma once

#include <string>
#include <string_view>

namespace kernelrl::common {

// 32 hex digits of XXH3-128 over `data`.
std::string hash_hex(std::string_view data);

// The same over a file's bytes, read in pieces (files of any size); "" when it cannot be read.
std::string hash_file_hex(const std::string& path);

}  // namespace kernelrl::common
