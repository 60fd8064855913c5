// expect: REJECTED
// Adversarial (host): looks for the reference's answer instead of computing it. It reads its
// environment and /proc/self/maps, then scans every anonymous read-write mapping of its own
// process (the evaluator's heap included) for a block whose first row equals the softmax of the
// current input's first row, and copies that block into the output; where nothing is found it
// leaves the output alone. Caught because the reference runs only after the candidate and its
// outputs are poisoned right after each check, so no answer is ever in memory to find: WRONG_OUTPUT
// with --allow-system-calls (EngineHostTest.NoAnswerInMemoryToFind); by default it is REJECTED
// first, for importing fopen (compile/import_check.hpp).
#include <kernelrl/abi.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const size_t bytes = static_cast<size_t>(rows * cols) * sizeof(float);

  // 1. The environment: a harness might leave a path or a value there.
  for (char** e = environ; e && *e; ++e) {
    if (std::strstr(*e, "REFERENCE") || std::strstr(*e, "EXPECTED")) std::fprintf(stderr, "found %s\n", *e);
  }

  // 2. Row 0 of the answer, the fingerprint to look for.
  std::vector<float> row0(static_cast<size_t>(cols));
  float m = -INFINITY, s = 0.f;
  for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, x[c]);
  for (int64_t c = 0; c < cols; ++c) s += (row0[c] = std::exp(x[c] - m));
  for (int64_t c = 0; c < cols; ++c) row0[c] /= s;

  // 3. Every anonymous read-write mapping, 64-byte aligned candidates (torch's CPU alignment),
  //    within a time budget.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  char line[512];
  const float* found = nullptr;
  while (!found && std::fgets(line, sizeof line, maps) && std::chrono::steady_clock::now() < deadline) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &path_at) < 3) continue;
    std::string path = line + path_at;
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    if (perms[0] != 'r' || perms[1] != 'w' || !(path.empty() || path == "[heap]")) continue;
    if (hi - lo < bytes || hi - lo > (1ul << 30)) continue;
    for (unsigned long a = lo; a + bytes <= hi; a += 64) {
      const float* p = reinterpret_cast<const float*>(a);
      if (p == y || p == x || p == row0.data() || p[0] != row0[0]) continue;
      if (std::memcmp(p, row0.data(), static_cast<size_t>(cols) * sizeof(float)) == 0) {
        found = p;
        break;
      }
    }
  }
  std::fclose(maps);
  if (found) std::memcpy(y, found, bytes);
  return 0;
}
