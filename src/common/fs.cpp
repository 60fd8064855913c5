#include "common/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
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

namespace {

// Copies the regular file `from` to `to` (created with `mode`), by read and write.
Fallible copy_file_bytes(const std::string& from, const std::string& to, mode_t mode) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return make_error(from + ": cannot open: " + std::strerror(errno));
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
  if (out < 0) {
    const int e = errno;
    ::close(in);
    return make_error(to + ": cannot create: " + std::strerror(e));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    ssize_t written = n < 0 ? -1 : 0;
    while (written >= 0 && written < n) {
      const ssize_t w = ::write(out, buffer + written, static_cast<std::size_t>(n - written));
      written = w < 0 ? (errno == EINTR ? written : -1) : written + w;
    }
    if (written < 0) {
      const int e = errno;
      ::close(in);
      ::close(out);
      return make_error((n < 0 ? from : to) + ": cannot copy: " + std::strerror(e));
    }
  }
  ::close(in);
  if (::close(out) != 0) return make_error(to + ": cannot copy: " + std::strerror(errno));
  return Ok{};
}

}  // namespace

Fallible link_or_copy_tree(const std::filesystem::path& from, const std::filesystem::path& to) {
  struct stat st {};
  if (::lstat(from.c_str(), &st) != 0) return make_error(from.string() + ": " + std::strerror(errno));
  if (S_ISLNK(st.st_mode)) return make_error(from.string() + ": a symbolic link (not followed)");
  if (S_ISREG(st.st_mode)) {
    if (::link(from.c_str(), to.c_str()) == 0) return Ok{};
    if (errno != EXDEV && errno != EPERM && errno != EMLINK) {
      return make_error(to.string() + ": cannot link " + from.string() + ": " + std::strerror(errno));
    }
    return copy_file_bytes(from.string(), to.string(), st.st_mode);
  }
  if (!S_ISDIR(st.st_mode)) return make_error(from.string() + ": neither a file nor a folder");
  if (::mkdir(to.c_str(), 0700) != 0) return make_error(to.string() + ": cannot create: " + std::strerror(errno));
  DIR* dir = ::opendir(from.c_str());
  if (!dir) return make_error(from.string() + ": cannot list: " + std::strerror(errno));
  Fallible result = Ok{};
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    result = link_or_copy_tree(from / name, to / name);
    if (!result) break;
  }
  ::closedir(dir);
  return result;
}

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
