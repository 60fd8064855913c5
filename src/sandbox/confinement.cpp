#include "sandbox/confinement.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sandbox/thread_census.hpp"

// Older kernel headers lack the ABI 3 right; its value is fixed by the kernel ABI.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

namespace kernelrl::sandbox {

namespace {

// Write-side rights of Landlock ABI 1, plus truncate (ABI 3) and refer (ABI 2) where known.
std::uint64_t write_rights(long abi) {
  std::uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                         LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                         LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return rights;
}

common::Error errno_error(const std::string& what) { return common::make_error(what + ": " + std::strerror(errno)); }

// Read-side rights (Landlock ABI 1); of them, only reading and executing apply to a single file.
constexpr std::uint64_t kReadRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
constexpr std::uint64_t kFileReadRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;

}  // namespace

namespace {

// The ruleset's attributes with the fields of later ABIs (handled_access_net: 4, scoped: 6), for
// headers that predate them; left zero, an older kernel accepts the longer struct.
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6)
constexpr std::uint64_t kScopeSignal = 1ULL << 1;              // LANDLOCK_SCOPE_SIGNAL (ABI 6)

// One path of a layer: the rights it grants below itself when it is a folder, or on itself otherwise.
struct PathGrant {
  std::string path;
  std::uint64_t folder_rights;
  std::uint64_t file_rights;
};

// One Landlock layer on this process and every process it starts: the handled rights (and scopes) are
// refused everywhere but where `grants` give them. A path that does not exist is skipped when
// `skip_missing`, else an error naming it as `what`.
common::Fallible restrict_self(const RulesetAttr& attr, const std::vector<PathGrant>& grants, bool skip_missing,
                               const std::string& what) {
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return errno_error("landlock_create_ruleset");
  for (const auto& grant : grants) {
    const int fd = ::open(grant.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && skip_missing) continue;
    struct stat st{};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      const int saved = errno;
      if (fd >= 0) ::close(fd);
      ::close(ruleset);
      errno = saved;
      return errno_error("cannot open " + what + " " + grant.path);
    }
    landlock_path_beneath_attr rule{};
    rule.allowed_access = (S_ISDIR(st.st_mode) ? grant.folder_rights : grant.file_rights) & attr.handled_access_fs;
    rule.parent_fd = fd;
    const long rc = rule.allowed_access == 0 ? 0 : ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    ::close(fd);
    if (rc != 0) {
      ::close(ruleset);
      return errno_error("landlock_add_rule for " + grant.path);
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    ::close(ruleset);
    return errno_error("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  const long rc = ::syscall(SYS_landlock_restrict_self, ruleset, 0);
  ::close(ruleset);
  if (rc != 0) return errno_error("landlock_restrict_self");
  return common::Ok{};
}

// The handled rights are refused everywhere but below `roots`, where a folder gets them all and a
// single file `file_rights` (the rights that apply to files).
common::Fallible restrict_to_roots(std::uint64_t handled, std::uint64_t file_rights, const std::vector<std::string>& roots,
                                   bool skip_missing, const std::string& what) {
  RulesetAttr attr;
  attr.handled_access_fs = handled;
  std::vector<PathGrant> grants;
  for (const auto& root : roots) grants.push_back({root, handled, file_rights});
  return restrict_self(attr, grants, skip_missing, what);
}

long landlock_abi() { return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION); }

}  // namespace

common::Fallible confine_writes(const std::vector<std::string>& writable_roots) {
  const long abi = landlock_abi();
  if (abi < 1) return errno_error("Landlock is not available in this kernel");
  // A single file (/dev/null) takes only the rights that apply to files.
  return restrict_to_roots(write_rights(abi), LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE, writable_roots,
                           false, "writable folder");
}

common::Fallible confine_reads(const std::vector<std::string>& readable_roots) {
  if (landlock_abi() < 1) return errno_error("Landlock is not available in this kernel");
  return restrict_to_roots(kReadRights, kFileReadRights, readable_roots, true, "readable root");
}

common::Fallible confine_files(const std::vector<std::string>& readable_roots, const std::vector<std::string>& writable_files) {
  const long abi = landlock_abi();
  if (abi < 1) return errno_error("Landlock is not available in this kernel");
  const auto census = thread_census(::getpid());
  if (!census) return common::make_error("cannot count this process's threads (" + census.error().message + "): file confinement refused");
  if (census->n_threads != 1) {
    return common::make_error("file confinement refused: the process has " + std::to_string(census->n_threads) +
                              " threads and Landlock binds only the calling one; confine before starting threads");
  }
  RulesetAttr attr;
  attr.handled_access_fs = kReadRights | write_rights(abi);
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  std::uint64_t write_file = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
  if (abi >= 3) write_file |= LANDLOCK_ACCESS_FS_TRUNCATE;  // O_TRUNC on a device file empties nothing
  std::vector<PathGrant> grants;
  for (const auto& root : readable_roots) grants.push_back({root, kReadRights, kFileReadRights});
  for (const auto& file : writable_files) {
    struct stat st{};
    if (::stat(file.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return common::make_error("writable file " + file + " is a folder: only single files may be written");
    }
    grants.push_back({file, 0, write_file});
  }
  return restrict_self(attr, grants, true, "file");
}

CandidateDeviceFiles device_files_for_candidates(bool cuda) {
  namespace fs = std::filesystem;
  CandidateDeviceFiles files{{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"}, {"/dev/null"}};
  if (!cuda) return files;
  std::vector<std::string> gpu;
  std::error_code ec;
  auto add_devices = [&](const fs::path& folder, const std::string& prefix) {
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code type_ec;
      if (name.rfind(prefix, 0) == 0 && fs::is_character_file(it->path(), type_ec)) gpu.push_back(it->path().string());
    }
    ec.clear();
  };
  add_devices("/dev", "nvidia");
  add_devices("/dev/nvidia-caps", "");
  std::sort(gpu.begin(), gpu.end());
  files.readable.insert(files.readable.end(), gpu.begin(), gpu.end());
  files.writable.insert(files.writable.end(), gpu.begin(), gpu.end());
  return files;
}

common::Fallible drop_capabilities() {
  // The bounding set first (needs CAP_SETPCAP, which is dropped last): a capability out of it can
  // never come back, not even through exec of a file that carries it.
  for (int cap = 0; cap < 64 && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) != 0) return errno_error("capset");
  return common::Ok{};
}

common::Expected<std::uint64_t> limit_address_space_growth(std::uint64_t headroom_bytes) {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::uint64_t vm_kb = 0;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) vm_kb = std::strtoull(line.c_str() + 7, nullptr, 10);
  }
  if (vm_kb == 0) return common::make_error("cannot read VmSize from /proc/self/status");
  const std::uint64_t limit = vm_kb * 1024 + headroom_bytes;
  rlimit r{limit, limit};
  if (::setrlimit(RLIMIT_AS, &r) != 0) return errno_error("setrlimit(RLIMIT_AS)");
  return limit;
}

common::Fallible limit_file_size(bool for_good) {
  rlimit r{};
  if (::getrlimit(RLIMIT_FSIZE, &r) != 0) return errno_error("getrlimit(RLIMIT_FSIZE)");
  r.rlim_cur = std::min<rlim_t>(r.rlim_cur, kMaxFileBytes);
  if (for_good) r.rlim_max = r.rlim_cur;
  if (::setrlimit(RLIMIT_FSIZE, &r) != 0) return errno_error("setrlimit(RLIMIT_FSIZE)");
  return common::Ok{};
}

common::Fallible with_file_size_limit_lifted(std::uint64_t n_bytes, const std::function<common::Fallible()>& size_file) {
  rlimit r{};
  if (::getrlimit(RLIMIT_FSIZE, &r) != 0) return errno_error("getrlimit(RLIMIT_FSIZE)");
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < n_bytes) {
    return common::make_error("a memory file of " + std::to_string(n_bytes) + " bytes is past this process's file-size limit (" +
                              std::to_string(r.rlim_max) + " bytes, RLIMIT_FSIZE)");
  }
  rlimit lifted{r.rlim_max, r.rlim_max};
  if (::setrlimit(RLIMIT_FSIZE, &lifted) != 0) return errno_error("setrlimit(RLIMIT_FSIZE)");
  common::Fallible sized = size_file();
  ::setrlimit(RLIMIT_FSIZE, &r);
  return sized;
}

std::vector<std::string> candidate_writable_roots() {
  std::vector<std::string> writable{std::filesystem::current_path().string(), "/dev"};
  if (const char* home = std::getenv("HOME")) {
    std::error_code ec;
    if (std::filesystem::is_directory(std::string(home) + "/.nv", ec)) writable.push_back(std::string(home) + "/.nv");
  }
  return writable;
}

}  // namespace kernelrl::sandbox
