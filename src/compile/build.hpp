// The two ways a cache miss is built: a shared library (native through nvcc, host through the C++
// compiler) in a private scratch folder that is renamed into the cache, or a kernelbench entry
// whose load_inline extensions are pre-built in place under a lock. Private to compile/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/subprocess.hpp"
#include "compile/compiler.hpp"

namespace kernelrl::compile::detail {

// Compilers run this much nicer than the engine: in a batch, the children evaluating candidates
// (timing among them) get the CPU first, the compiles take what is left.
inline constexpr int kCompilerNice = 10;

// Defined for every nvcc compile of a candidate (native, and kernelbench through NVCC_APPEND_FLAGS):
// CUDA 13's CUB (<cub/cub.cuh>) brings NVTX ranges whose header-inline loader dlopen()s an injection
// library, which the import check refuses as the candidate's run-time lookup. Measured on the H200
// (2026-12-01, 01b79f0): 4 honest kernelbench candidates that include <cub/cub.cuh> REJECTED for
// dlopen called from nvtxInitializeInjectionLibrary_v3. With NVTX off the ranges compile to nothing.
inline constexpr const char* kNvtxOffDefines[] = {"-DCCCL_DISABLE_NVTX", "-DNVTX_DISABLE"};

// Everything one build needs; references stay valid for the call.
struct BuildRequest {
  const Toolchain& toolchain;
  const std::filesystem::path& cache_dir;
  const std::string& source;
  const std::string& display_name;
  const CompileOptions& options;
  const std::string& key_text;
  const std::filesystem::path& entry;  // where the finished entry lives
};

// A compiler run turned into a result, and whether a rerun would give the same answer.
struct BuildOutcome {
  CompileResult result;   // status, message, log_excerpt (artifact not set)
  bool cacheable = false; // false for timeouts and resource kills
};

// Compiles a native or host candidate into <entry>/candidate.so (through a scratch folder).
CompileResult build_library(const BuildRequest& request);

// Runs a kernelbench candidate once so its load_inline extensions build into <entry>/extensions.
CompileResult build_kernelbench(const BuildRequest& request);

// Classifies a finished compiler run: TIMEOUT past the limit, COMPILE_ERROR on a non-zero exit or
// a signal (message = first error line, excerpt = trimmed diagnostics), OK otherwise. `tool` names
// the program in messages ("nvcc", "the C++ compiler"). The output must already name the candidate
// by display_name (see clean_paths).
BuildOutcome interpret_run(const common::Expected<common::RunResult>& run, const std::string& tool,
                            const CompileOptions& options, const std::string& display_name);

// Compiler output with the source's scratch path replaced by display_name and any other path
// under `scratch_dir` made relative, so no private folder name reaches a model.
std::string clean_paths(const std::string& output, const std::filesystem::path& source,
                        const std::filesystem::path& scratch_dir, const std::string& display_name);

// argv that runs `argv` with `env` ("NAME=value") set, overriding inherited values (through env(1)).
std::vector<std::string> with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv);

// argv that runs `argv` under tools/confine (tc.confine, which must be set): reads, listing and
// executing only below the toolchain's read roots (with the interpreter's when `python`), the
// options' extra roots and `writable`; writes only below `writable`; the Build system-call filter.
std::vector<std::string> confined(const Toolchain& tc, const CompileOptions& options, bool python,
                                  const std::vector<std::string>& writable, const std::vector<std::string>& argv);

// "9.0" for "90", "10.0a" for "100a"; empty if `arch` is not 2-3 digits plus an optional a/f.
std::string dotted_arch(const std::string& arch);

// Milliseconds since `start`.
double ms_since(std::chrono::steady_clock::time_point start);

}  // namespace kernelrl::compile::detail
