// expect: REJECTED
// Adversarial (host): stops the timer before doing its work. A host candidate runs in a process of
// its own and is told "call" by a doorbell in pages it shares with the evaluator, which waits for
// the answering doorbell (eval/host_runner.hpp). This candidate finds those pages in
// /proc/self/maps (the shared anonymous mapping whose header says "call"), rings the answer itself
// at once, then computes the softmax and burns 20 ms before returning. Caught: the evaluator pings
// the process after every call, inside the timed region, and only the process's own loop answers,
// after the candidate returned (EngineHostTest.EarlyDoneIsStillTimed, with the system-access check
// off: OK with the 20 ms timed). By default it is REJECTED first, for importing fopen.
#include <kernelrl/abi.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

// The start of the header: the request doorbell, the answer doorbell, the request's kind (3: a call).
struct HeaderStart {
  uint32_t command, reply;
  int32_t op;
};

HeaderStart* find_header() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return nullptr;
  char line[512];
  HeaderStart* found = nullptr;
  while (!found && std::fgets(line, sizeof line, maps)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3) continue;
    if (std::strcmp(perms, "rw-s") != 0) continue;
    auto* h = reinterpret_cast<HeaderStart*>(lo);
    if (h->op == 3 && h->command == h->reply + 1) found = h;
  }
  std::fclose(maps);
  return found;
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  if (HeaderStart* h = find_header()) __atomic_store_n(&h->reply, h->command, __ATOMIC_RELEASE);  // "done"
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
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
  }
  return 0;
}
