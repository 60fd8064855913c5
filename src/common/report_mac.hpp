// The evaluating child's report channel is authenticated: each line it writes to its worker (its
// phases, its record) carries an HMAC-SHA256 under a key the worker draws for that evaluation and
// hands only to the child (in its request, or in the memory it is forked with). The candidate's
// process is exec'd and never holds the key (eval/runner_process.hpp), so even a line that reached
// the channel by another route would not be believed. Lines are numbered in the MAC, so none can be
// replayed or reordered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kernelrl::common {

// 32 bytes from getrandom(), as 64 lowercase hex digits. Empty when the kernel gives none.
std::string new_report_key();

// The line to write for the `seq`-th line (0, 1, ...) whose content is `raw` (one JSON document,
// no newline): {"mac":"HEX","line":RAW}.
std::string signed_line(const std::string& key_hex, std::uint64_t seq, const std::string& raw);

// RAW when `line` is the `seq`-th line signed under `key_hex`; nullopt when its form or its MAC is
// wrong (compared in constant time).
std::optional<std::string> verified_line(const std::string& key_hex, std::uint64_t seq, const std::string& line);

}  // namespace kernelrl::common
