// The CUDA driver names its threads by writing /proc/self/task/TID/comm through fopen(PATH, "wb"),
// and fails cuInit ("OS call failed", 304) when that open fails (seen on the H200, driver 580). The
// runner confines its files before the driver starts (runner/confine.hpp), and may not write below
// /proc: a writable /proc/PID would let the candidate write its own code pages through
// /proc/PID/mem, past W^X. So this program's own fopen, exported to the libraries it loads (the
// driver's references bind to the executable first), answers an open for writing of a thread's
// `comm` with /dev/null, opened without creating anything; every other open goes to the C library.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>

namespace {

using fopen_fn = FILE* (*)(const char*, const char*);

// /proc/.../task/.../comm, or /proc/.../comm, opened to write.
bool names_a_thread(const char* path, const char* mode) {
  if (!path || !mode || std::strncmp(path, "/proc/", 6) != 0) return false;
  const std::size_t n = std::strlen(path);
  const bool comm = n >= 5 && std::strcmp(path + n - 5, "/comm") == 0;
  return comm && (std::strchr(mode, 'w') != nullptr || std::strchr(mode, 'a') != nullptr);
}

FILE* open_dev_null() {
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd < 0 ? nullptr : ::fdopen(fd, "w");
}

FILE* forward(const char* symbol, const char* path, const char* mode) {
  static fopen_fn real_fopen = reinterpret_cast<fopen_fn>(::dlsym(RTLD_NEXT, "fopen"));
  static fopen_fn real_fopen64 = reinterpret_cast<fopen_fn>(::dlsym(RTLD_NEXT, "fopen64"));
  fopen_fn real = std::strcmp(symbol, "fopen64") == 0 && real_fopen64 ? real_fopen64 : real_fopen;
  return real ? real(path, mode) : nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  return names_a_thread(path, mode) ? open_dev_null() : forward("fopen", path, mode);
}

extern "C" __attribute__((visibility("default"))) FILE* fopen64(const char* path, const char* mode) {
  return names_a_thread(path, mode) ? open_dev_null() : forward("fopen64", path, mode);
}
