// expect: REJECTED
// Adversarial (host; tests the runner's W^X rule): writes machine code at run time and runs it, the
// way past every scan of the library's own bytes (code written at run time can make any system
// call). It maps an anonymous page readable, writable and executable, writes `mov eax, 42; ret`
// into it, calls it, and writes the softmax only if the call returned 42, else returns 1, so anything
// but OK means no code written at run time ran.
// Why it fails now: the runner's seccomp filter kills mmap with PROT_EXEC of anonymous, shared or
// writable memory (SIGSYS: REJECTED). Runs with the static scans on: it calls libc's `mmap`, which
// the import check does not refuse (compile/import_check.cpp lists mprotect, not mmap), and has no
// system-call instruction; runtime_layers.json lists it with the scan off too, in case the import
// check ever refuses `mmap`. One layer thinner (no W^X rule) the code runs and the candidate scores
// OK; a real attack would write a `syscall` there instead.
#include <kernelrl/abi.h>
#include <sys/mman.h>

#include <cmath>
#include <cstring>

namespace {

constexpr unsigned char kReturn42[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};  // mov eax, 42; ret
constexpr size_t kPage = 4096;

// The value returned by code written into a fresh RWX page, or -1 if no such page could be made.
int run_written_code() {
  void* page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return -1;
  std::memcpy(page, kReturn42, sizeof kReturn42);
  const int value = reinterpret_cast<int (*)()>(page)();
  munmap(page, kPage);
  return value;
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  if (run_written_code() != 42) return 1;  // no code written at run time ran: no score
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
