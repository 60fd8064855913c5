// expect: REJECTED
// Adversarial (host; tests the runner's image rule and full RELRO): takes over the program that
// calls it. The runner is linked non-PIE at 0x400000, so its ELF header sits at a known address: the
// candidate reads the program headers there, finds PT_GNU_RELRO (the GOT among it), makes that range
// writable with mprotect(PROT_READ | PROT_WRITE) by the `syscall` instruction, then writes into it
// (each word's own value back: a real attack would point the runner's clock_gettime or futex entry
// at its own code). It writes the softmax only if the mprotect succeeded, else returns 1, so anything
// but OK means the GOT stayed read-only.
// Why it fails now: the runner's seccomp filter kills mprotect (and munmap, mremap, madvise,
// mmap(MAP_FIXED)) on addresses below the end of its own image: SIGSYS, REJECTED. Without that rule,
// full RELRO alone would not hold (RELRO is only an mprotect the loader made; another undoes it).
// Needs the static scan off (EngineConfig::system_access_check = false): `mprotect` is refused as an
// import and the `syscall` instruction at build (REJECTED) otherwise. One layer thinner (no image
// rule) the GOT is writable and the runner's own calls could be redirected; thinner again (the
// candidate in the evaluating process, lazy binding) no mprotect is even needed.
#include <elf.h>
#include <kernelrl/abi.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr long kMprotect = 10;
constexpr long kProtRead = 1, kProtWrite = 2;
constexpr uintptr_t kRunnerBase = 0x400000;  // the runner's link address (non-PIE)
constexpr uintptr_t kPage = 4096;

long raw_syscall3(long number, long a, long b, long c) {
  long result;
  asm volatile("syscall" : "=a"(result) : "a"(number), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return result;
}

// Makes the non-PIE program's RELRO range writable and writes into it; false if there is none or the
// kernel refused.
bool write_into_the_runner_relro() {
  const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(kRunnerBase);
  if (ehdr->e_ident[EI_MAG0] != ELFMAG0 || ehdr->e_ident[EI_MAG1] != ELFMAG1 || ehdr->e_ident[EI_MAG2] != ELFMAG2 ||
      ehdr->e_ident[EI_MAG3] != ELFMAG3 || ehdr->e_type != ET_EXEC) {
    return false;
  }
  const auto* phdr = reinterpret_cast<const Elf64_Phdr*>(kRunnerBase + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdr[i].p_type != PT_GNU_RELRO || phdr[i].p_memsz == 0) continue;
    const uintptr_t begin = phdr[i].p_vaddr & ~(kPage - 1);
    const uintptr_t end = (phdr[i].p_vaddr + phdr[i].p_memsz) & ~(kPage - 1);  // the loader's own rounding
    if (end <= begin) return false;
    if (raw_syscall3(kMprotect, static_cast<long>(begin), static_cast<long>(end - begin), kProtRead | kProtWrite) != 0) {
      return false;
    }
    for (auto* word = reinterpret_cast<volatile uintptr_t*>(begin); word < reinterpret_cast<volatile uintptr_t*>(end);
         ++word) {
      *word = *word;
    }
    raw_syscall3(kMprotect, static_cast<long>(begin), static_cast<long>(end - begin), kProtRead);
    return true;
  }
  return false;
}

}  // namespace

extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,
                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)stream;
  if (n_inputs != 1 || n_outputs != 1 || inputs[0].ndim != 2) return 1;
  static const bool patched = write_into_the_runner_relro();
  if (!patched) return 1;  // the GOT stayed read-only: no score
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
