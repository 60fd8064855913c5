// expect: COMPILE_ERROR
// Adversarial (host): a correct softmax that also assembles /etc/passwd into its library with the
// assembler's incbin directive spelt by token pasting, so the source never holds the directive's
// text (with its dot: none appears in this file) and the static scan (compile/source_scan.hpp) does
// not see it. The bytes would then be in the build (a model could print them, or use the include
// directive to see them in the assembler's error text). Caught because the compiler runs
// read-confined (compile/read_roots.hpp): the assembler cannot open the file.
#include <kernelrl/abi.h>
#include <cmath>

#define KRL_STR2(x) #x
#define KRL_STR(x) KRL_STR2(x)
#define KRL_PASTE(a, b) a##b

asm(".section .rodata\n"
    ".globl kernelrl_leaked_host_file\n"
    "kernelrl_leaked_host_file:\n"
    "." KRL_STR(KRL_PASTE(inc, bin)) " \"/etc/passwd\"\n"
    ".byte 0\n"
    ".text\n");

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
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
