// kernelrl-confine: runs a command confined as a build that executes candidate code is (the
// kernelbench prebuild imports the candidate's module, which load_inline needs to start compilers):
// writes only below the --write folders (Landlock) and the Build system-call filter (no network,
// tracing, mounts, namespaces or modules; sandbox/syscall_filter.hpp). What the kernel cannot
// provide is said on stderr and the command runs without it.
//
//   kernelrl-confine --write DIR [--write DIR ...] -- PROGRAM [ARG ...]
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/confinement.hpp"
#include "sandbox/syscall_filter.hpp"

namespace {

int usage(const char* why) {
  std::fprintf(stderr, "kernelrl-confine: %s\nusage: kernelrl-confine --write DIR [--write DIR ...] -- PROGRAM [ARG ...]\n",
               why);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> writable;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--write") != 0 || i + 1 >= argc) return usage("expected --write DIR or --");
    writable.push_back(argv[++i]);
  }
  if (i >= argc) return usage("no -- before the command");
  if (i + 1 >= argc) return usage("no command after --");
  if (writable.empty()) return usage("no --write folder");
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
