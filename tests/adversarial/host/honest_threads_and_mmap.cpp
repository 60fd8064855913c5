// expect: OK
// Honest control (host) for the runner's confinement: what an honest CPU kernel does with memory and
// threads must pass every new rule. A 64 MB scratch buffer taken from the heap on the first call
// (glibc maps it with mmap, readable and writable, never executable, far above the runner's image)
// and four std::threads per call, joined before the call returns, each with a row buffer of its own
// on the heap. Under strace (glibc 2.36) that is: thread stacks mapped PROT_NONE and opened with
// mprotect(PROT_READ | PROT_WRITE), per-thread malloc arenas reserved PROT_NONE, trimmed with munmap
// and opened the same way, stacks released with madvise(MADV_DONTNEED) as threads exit; none adds
// PROT_EXEC or touches the image. Nothing runs between calls. Must stay OK under W^X, the image rule,
// the rule against file creation and the CPU-time rule between requests.
#include <kernelrl/abi.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
constexpr size_t kScratchBytes = size_t{64} << 20;

// Softmax of rows t, t + kThreads, ... through the shared scratch, one heap row buffer per worker.
void softmax_rows(const float* x, float* y, float* scratch, int64_t rows, int64_t cols, int t) {
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = t; r < rows; r += kThreads) {
    const float* xr = x + r * cols;
    float* er = scratch + r * cols;
    float m = -INFINITY, s = 0.f;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    for (int64_t c = 0; c < cols; ++c) s += (row[c] = std::exp(xr[c] - m));
    for (int64_t c = 0; c < cols; ++c) er[c] = row[c] / s;
    std::memcpy(y + r * cols, er, sizeof(float) * cols);
  }
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  static std::vector<float> scratch(kScratchBytes / sizeof(float));
  if (static_cast<size_t>(rows * cols) > scratch.size()) return 1;
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) workers.emplace_back(softmax_rows, x, y, scratch.data(), rows, cols, t);
  for (auto& w : workers) w.join();
  return 0;
}
