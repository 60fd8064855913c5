// expect: REJECTED
// Adversarial (host): correct output, but tries to plant a file outside its scratch folder
// (e.g. into the compile cache or the results). Caught before loading: the library imports fopen
// (compile/import_check.hpp). Behind that check, write confinement: with it off
// (--allow-system-calls) the candidate is OK and the file never appears
// (EngineHostTest.WritesOutsideScratchNeverLand).
#include <kernelrl/abi.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  if (const char* target = std::getenv("KERNELRL_TEST_ESCAPE_FILE")) {
    if (FILE* f = std::fopen(target, "w")) {
      std::fputs("planted", f);
      std::fclose(f);
    }
  }
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
