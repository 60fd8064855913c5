// Compiles candidates to loadable artifacts: native (.cu -> .so through nvcc), host (.cpp -> .so
// through g++), kernelbench (.py whose load_inline extensions are pre-built by running the file
// once under the task's Python). Every compile is content-addressed and cached; compiler output
// is trimmed to the first errors, ready to show a model.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/status.hpp"

namespace kernelrl::compile {

struct CompileOptions {
  common::Format format = common::Format::NATIVE;
  std::string cuda_arch = "90";                  // compute capability without the dot, from the device
  std::chrono::milliseconds time_limit{60000};   // wall time for one compile, then TIMEOUT
  std::uint64_t memory_limit_bytes = 16ull << 30;  // address space of each compiler process
  std::vector<std::string> extra_flags;          // appended to the compiler command (part of the key)
  bool use_cache = true;                         // false: always compile (the result is still stored)
  bool host_pch = true;       // native: nvcc's host compile against cached precompiled headers (compile/host_pch.hpp)
  bool parallel_nvcc = true;  // native: nvcc's host and device front ends side by side (compile/nvcc_steps.hpp)
  common::RuleSet rules = common::RuleSet::STRICT;  // kernelbench: which static rules apply (checked before the
                                                    // cache, so not part of the key: both share one build)
  bool system_access_check = true;  // built libraries that import or make system calls, and kernelbench
                                    // modules that reach the process (os, sys, open, ...), are REJECTED
                                    // (compile/import_check.hpp, system_call_check.hpp, python_scan.hpp;
                                    // part of the key). false only to test the sandbox behind it
  std::vector<std::string> extra_read_roots;  // folders or files the compilers may read beyond
                                              // Toolchain::read_roots (unusual layouts; not part of the key)
};

struct CompileResult {
  common::Status status = common::Status::COMPILE_ERROR;  // OK, FORMAT_ERROR, COMPILE_ERROR, TIMEOUT, REJECTED
  std::filesystem::path artifact;  // native/host: the .so; kernelbench: the entry folder (candidate.py, extensions/)
  std::string message;             // one line a model can act on ("candidate.cu:12: error: ...")
  std::string log_excerpt;         // first errors with line numbers, scratch paths replaced by the file name
  std::string key;                 // cache key (hash of source, format, flags, toolchain, arch)
  bool cache_hit = false;
  double t_compile_ms = 0;         // wall time of this request, cache lookup included
  std::string pipeline_note;       // native, built now: why nvcc ran as is when parallel_nvcc asked otherwise
};

// Toolchain identity, detected once: part of every cache key.
struct Toolchain {
  std::string nvcc;          // path of nvcc
  std::string nvcc_version;  // e.g. "13.0.88"; empty if nvcc is absent
  std::string cxx;           // path of the host C++ compiler
  std::string cxx_version;   // first line of `c++ --version`
  std::string cuda_host_cxx; // the g++ nvcc itself uses (first on PATH), which links native candidates
  std::string cuda_host_cc;  // the gcc nvcc itself uses (first on PATH), which host_cc_wrapper runs
  std::string host_cc_wrapper;  // tools/host-cc when built and cuda_host_cc is known, else empty
  std::string fast_linker;   // "-fuse-ld=gold" when gold is installed (native links), else empty
  std::string python;        // interpreter that builds kernelbench candidates
  std::string confine;       // tools/confine, which every compile of a candidate runs under; empty when not built
  std::filesystem::path abi_include_dir;  // holds kernelrl/abi.h
  // What the compilers may read besides the candidate's own folder (compile/read_roots.hpp): the
  // system trees, the compilers' install prefixes, the engine's headers, the loader's few files and
  // $KERNELRL_COMPILE_READ_ROOTS; python_read_roots adds the interpreter's paths (the prebuild).
  // Not part of any key.
  std::vector<std::string> read_roots;
  std::vector<std::string> python_read_roots;
};

// Finds the compilers (nvcc from $KERNELRL_NVCC, else the configured toolkit, else PATH; the C++
// compiler from $CXX or the configured one), reads their versions and computes the roots the
// compilers may read (asking the interpreter for its paths). Fails only if the C++
// compiler cannot be found or run; without nvcc, `nvcc` stays empty and native compiles fail with
// a message saying so.
common::Expected<Toolchain> detect_toolchain();

// Static checks before any compiler runs: empty, binary, over max_bytes (1 MB), no entry point
// (`kernelrl_forward` for native/host, `class ModelNew` for kernelbench), forbidden includes for
// native/host (torch, ATen, c10, cuBLAS, cuDNN, ...: REJECTED), the kernelbench format rules (with
// the rules on reaching the process only when `system_access_rules`; `rules` picks the rule set).
// Returns status OK when it passes.
inline constexpr std::uint64_t kMaxSourceBytes = 1u << 20;
CompileResult check_source(const std::string& source, common::Format format, const std::string& display_name,
                           std::uint64_t max_bytes = kMaxSourceBytes, bool system_access_rules = true,
                           common::RuleSet rules = common::RuleSet::STRICT);

// Trims compiler output to the first `max_errors` errors (each with its following context lines),
// replaces `scratch_path` with `display_name`, and caps the excerpt at max_chars.
std::string trim_diagnostics(const std::string& output, const std::string& scratch_path,
                             const std::string& display_name, int max_errors = 5, std::size_t max_chars = 2000);

// The TORCH_CUDA_ARCH_LIST a kernelbench artifact is built with: "9.0" for cuda_arch "90", "10.0a"
// for "100a"; empty if cuda_arch is malformed. A runner that imports the artifact must set the same
// value and TORCH_EXTENSIONS_DIR=<artifact>/extensions, or torch rebuilds the extensions.
std::string torch_cuda_arch_list(const std::string& cuda_arch);

// Compiles one candidate through the cache at `cache_dir`. Thread-safe; several threads may ask
// for the same key at once (the artifact is built in a private folder and renamed into place;
// kernelbench entries, whose torch build folders must not move, are built in place under a lock).
class Compiler {
 public:
  Compiler(Toolchain toolchain, std::filesystem::path cache_dir);

  CompileResult compile(const std::string& source, const std::string& display_name,
                        const CompileOptions& options) const;

  const Toolchain& toolchain() const { return toolchain_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

 private:
  Toolchain toolchain_;
  std::filesystem::path cache_dir_;
};

}  // namespace kernelrl::compile
