// Small file-system helpers with errors that name the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/expected.hpp"

namespace kernelrl::common {

// Reads a whole file; fails with a message naming `path` if it is missing, unreadable or larger
// than max_bytes.
Expected<std::string> read_file(const std::filesystem::path& path,
                                std::uint64_t max_bytes = 64ull << 20);

// Writes `data` to a temporary file beside `path` and renames it over `path` (atomic on POSIX).
Fallible write_file_atomic(const std::filesystem::path& path, const std::string& data);

// Creates a fresh private directory under `parent` (mode 0700) and returns its path.
Expected<std::filesystem::path> make_temp_dir(const std::filesystem::path& parent,
                                              const std::string& prefix);

// The per-user cache root: $KERNELRL_CACHE_DIR, else $XDG_CACHE_HOME/kernelrl, else ~/.cache/kernelrl.
std::filesystem::path cache_root();

// Makes `to` hold what `from` holds (a file, or a folder and everything under it): each file
// hard-linked where both are on one file system, copied otherwise. `to` must not exist. Symbolic
// links are not followed (an Error names the first one). Errors name the path at fault. By system
// calls, not std::filesystem::copy, for the reason remove_tree (below) gives.
Fallible link_or_copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Removes `path` and everything under it (symbolic links are removed, never followed); a missing
// path is fine. Returns the number of entries removed, or an Error naming the first entry that
// could not be removed. Use this, not std::filesystem::remove_all: the pip builds of libtorch.so
// export their own copy of std::filesystem, and where it came first in a binary's library order
// its remove_all(path, error_code&) jumped to address 0 on the H200 machine (2026-11-30: it crashed
// `kernelrl train` when it removed the previous step's checkpoint). cmake/torch.cmake now puts
// libstdc++ first; this keeps the recursive removal independent of whichever copy binds.
Expected<std::uint64_t> remove_tree(const std::filesystem::path& path);

}  // namespace kernelrl::common
