// kernelrl-confine: runs a command confined as a candidate's build is: reads (and listing, and
// executing) only below the --read roots and the --write paths, writes only below the --write
// folders and to the --write single files such as /dev/null or the GPU's device files (Landlock, two
// layers: sandbox/confinement.hpp), and the Build system-call filter (no network, tracing, mounts,
// namespaces or modules; sandbox/syscall_filter.hpp). Every compiler the
// engine runs for a candidate runs under it (native and host builds, the kernelbench prebuild, which
// also runs the candidate's module-level code). Without --read, reads are not confined. What the
// kernel cannot provide is said on stderr (so in the build log) and the command runs without it.
//
//   kernelrl-confine [--read PATH ...] --write PATH [--write PATH ...] -- PROGRAM [ARG ...]
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/confinement.hpp"
#include "sandbox/syscall_filter.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "kernelrl-confine: %s\nusage: kernelrl-confine [--read PATH ...] --write PATH [--write PATH ...] -- "
               "PROGRAM [ARG ...]\n",
               why);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> writable, readable;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    const bool write = std::strcmp(argv[i], "--write") == 0, read = std::strcmp(argv[i], "--read") == 0;
    if ((!write && !read) || i + 1 >= argc) return usage("expected --write PATH, --read PATH or --");
    (write ? writable : readable).push_back(argv[++i]);
  }
  if (i >= argc) return usage("no -- before the command");
  if (i + 1 >= argc) return usage("no command after --");
  if (writable.empty()) return usage("no --write folder");
  if (!readable.empty()) {  // what a process may write it may read back
    readable.insert(readable.end(), writable.begin(), writable.end());
    if (auto s = kernelrl::sandbox::confine_reads(readable); !s) {
      std::fprintf(stderr, "kernelrl-confine: read confinement unavailable, running without it: %s\n",
                   s.error().message.c_str());
    }
  }
  if (auto s = kernelrl::sandbox::confine_writes(writable); !s) {
    std::fprintf(stderr, "kernelrl-confine: write confinement unavailable, running without it: %s\n",
                 s.error().message.c_str());
  }
  if (auto s = kernelrl::sandbox::install_syscall_filter(kernelrl::sandbox::FilterProfile::Build); !s) {
    std::fprintf(stderr, "kernelrl-confine: system-call filter unavailable, running without it: %s\n",
                 s.error().message.c_str());
  }
  ::execvp(argv[i + 1], argv + i + 1);
  std::fprintf(stderr, "kernelrl-confine: cannot run %s: %s\n", argv[i + 1], std::strerror(errno));
  return 127;
}
