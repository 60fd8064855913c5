#include "common/fs.hpp"

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kernelrl::common {

namespace fs = std::filesystem;

Expected<std::string> read_file(const fs::path& path, std::uint64_t max_bytes) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return make_error(path.string() + ": no such file");
  if (fs::is_directory(path, ec)) return make_error(path.string() + ": is a directory, not a file");
  auto size = fs::file_size(path, ec);
  if (ec) return make_error(path.string() + ": cannot read size: " + ec.message());
  if (size > max_bytes) {
    return make_error(path.string() + ": file is " + std::to_string(size) + " bytes, over the limit of " +
                      std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Fallible write_file_atomic(const fs::path& path, const std::string& data) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  // Unique per writer, threads of one process included: two writers of the same file (a worker's
  // prefetched job and the one it evaluates, both writing their task's files) never share a
  // temporary, and the last rename wins with a whole file.
  static std::atomic<std::uint64_t> n_written{0};
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n_written.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(tmp.string() + ": cannot write: " + std::strerror(errno));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return make_error(tmp.string() + ": write failed: " + std::strerror(errno));
  }
  fs::rename(tmp, path, ec);
  if (ec) return make_error(path.string() + ": cannot rename into place: " + ec.message());
  return Ok{};
}

Expected<fs::path> make_temp_dir(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return make_error(parent.string() + ": cannot create directory: " + ec.message());
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return make_error(parent.string() + ": cannot create a temporary directory: " + std::strerror(errno));
  }
  return fs::path(pattern);
}

fs::path cache_root() {
  if (const char* d = std::getenv("KERNELRL_CACHE_DIR"); d && *d) return fs::path(d);
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "kernelrl";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "kernelrl";
  return fs::temp_directory_path() / "kernelrl-cache";
}

namespace {

// nftw's callback cannot carry state: remove_tree points this thread's pointer at its own.
struct RemoveTreeState {
  std::uint64_t removed = 0;
  int error = 0;
  std::string failed;
};
thread_local RemoveTreeState* remove_tree_state = nullptr;

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (::remove(path) != 0 && errno != ENOENT) {
    remove_tree_state->error = errno;
    remove_tree_state->failed = path;
    return 1;  // stop the walk
  }
  ++remove_tree_state->removed;
  return 0;
}

}  // namespace

Expected<std::uint64_t> remove_tree(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::uint64_t{0};
    return Error{path.string() + ": cannot remove: " + std::strerror(errno)};
  }
  RemoveTreeState state;
  remove_tree_state = &state;
  // Depth first (children before their directory), physical (links are not followed).
  const int rc = ::nftw(path.c_str(), remove_entry, 32, FTW_DEPTH | FTW_PHYS);
  remove_tree_state = nullptr;
  if (state.error != 0) return Error{state.failed + ": cannot remove: " + std::strerror(state.error)};
  if (rc != 0) return Error{path.string() + ": cannot remove: " + std::strerror(errno)};
  return state.removed;
}

}  // namespace kernelrl::common
