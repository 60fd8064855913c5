// Precompiled headers for nvcc's host compile. Of a native candidate's cold compile, the last step
// (gcc compiling cudafe++'s output, ~26k lines of CUDA runtime and C library declarations before
// the candidate's few lines) waits for the whole device chain and parses the same headers every
// time. nvcc is pointed (-ccbin) at a thin wrapper (tools/host-cc) that runs this: every call
// passes straight to the real gcc except that host compile, which is split where the candidate's
// own code starts; the header part is compiled once into a gcc precompiled header (kept per
// content under a cache folder) and the rest compiled against it. The result is the same object
// (same text, same flags); any surprise (no split point, a failed build, a failed compile) runs
// the original command unchanged, so diagnostics are always gcc's own.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelrl::compile::host_pch {

// Environment of the wrapper, set by the engine: the real host compiler (nvcc's default gcc) and
// the folder of precompiled headers (absent: every call passes through).
inline constexpr const char* kRealCompilerEnv = "KERNELRL_HOST_CC";
inline constexpr const char* kPchDirEnv = "KERNELRL_HOST_PCH_DIR";

// Headers shorter than this are not worth a precompiled header.
inline constexpr std::size_t kMinPrefixBytes = 64 * 1024;
// Precompiled headers kept (~15 MB each); the least recently used beyond this are removed.
inline constexpr std::size_t kMaxEntries = 32;

// Where the header part of cudafe++'s output ends: the start of the first line marker that returns
// to the source file named on the first line (`# 1 "/scratch/candidate.cu"`). nullopt when the text
// does not start that way, never returns to the source, or the part is under kMinPrefixBytes. The
// precompiled header holds the part without that first line (the path differs per build).
std::optional<std::size_t> header_prefix_length(std::string_view cudafe_output);

// nvcc's host compile, recognised in a compiler command line: `-c`, `-o OUT`, and one input
// ending in ".cudafe1.cpp". Indices into the argument list (argv[0] excluded).
struct HostCompile {
  std::size_t input_index = 0;
  std::size_t output_index = 0;
};
std::optional<HostCompile> find_host_compile(const std::vector<std::string>& args);

// Removes the least recently used entries (folders, with their lock files) of the header cache
// `dir` beyond `max_entries`; folders being built ("build-*") are left alone.
void evict_least_recent(const std::filesystem::path& dir, std::size_t max_entries);

// The wrapper's whole behaviour for arguments `args` (argv without argv[0]); returns the exit code
// (or does not return, having exec'd the real compiler). Messages go to stderr, prefixed
// "kernelrl host-cc:".
int run_wrapper(const std::vector<std::string>& args);

}  // namespace kernelrl::compile::host_pch
