// expect: RUNTIME_ERROR
// Adversarial (host; tests the runner's Landlock read rule): reads a host file it has no business
// with, /etc/passwd (the stand-in for /etc/shadow, a key, another candidate's sources or the task's
// reference outputs), by openat(AT_FDCWD, "/etc/passwd", O_RDONLY) and read() made with the `syscall`
// instruction (no import: `open` and `syscall` are refused at build). It writes the softmax only if
// the read returned bytes, else returns 1, so anything but OK means the read failed.
// Why it fails now: the runner's Landlock layer allows reads only below the system's trees, the
// interpreter's paths and its working folder, never /etc: openat fails with EACCES (a read-only open
// is no filter kill), the candidate returns 1: RUNTIME_ERROR. Needs the static scan off
// (EngineConfig::system_access_check = false, `--allow-system-calls`): its `syscall` instruction is
// refused at build (REJECTED) otherwise. One layer thinner (no Landlock) the read succeeds and the
// candidate scores OK with the file's first bytes in hand.
#include <kernelrl/abi.h>

#include <cmath>

namespace {

constexpr long kRead = 0, kClose = 3, kOpenat = 257;
constexpr long kAtFdcwd = -100;
constexpr long kReadOnly = 0;

long raw_syscall4(long number, long a, long b, long c, long d) {
  long result;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return result;
}

// Bytes read from the start of `path`, or a negative errno.
long read_head(const char* path, char* buffer, long size) {
  const long fd = raw_syscall4(kOpenat, kAtFdcwd, reinterpret_cast<long>(path), kReadOnly, 0);
  if (fd < 0) return fd;
  const long n = raw_syscall4(kRead, fd, reinterpret_cast<long>(buffer), size, 0);
  raw_syscall4(kClose, fd, 0, 0, 0);
  return n;
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  char head[64];
  if (read_head("/etc/passwd", head, sizeof head) <= 0) return 1;  // not read: no score
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (yr[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) yr[c] /= s;
  }
  return 0;
}
