// The content-addressed compile cache. An entry is <cache_dir>/<key[0:2]>/<key>/ holding the
// source, the artifact, key.txt (the full key text, compared byte for byte on every hit),
// result.json (status, message, log excerpt) and compile.log (the whole compiler output).
// Entries appear atomically: a build folder is renamed into place, or (kernelbench, whose
// extension build folders must not move) result.json is written last. Private to compile/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "compile/compiler.hpp"

namespace kernelrl::compile::detail {

// Bump when the compile commands or the entry layout change: old entries then stop matching.
// v2: native compiles use the specfun shim and --threads 2.
inline constexpr const char* kKeySchema = "kernelrl-compile-key v4";

// The canonical text whose hash is the cache key: schema, format, arch (native, kernelbench),
// toolchain identity, ABI header, extra flags and the source. Reads the ABI header and, for host
// candidates, the CPU identity (their code is built with -march=native).
std::string make_key_text(const Toolchain& toolchain, const std::string& source, const CompileOptions& options);

// <cache_dir>/<key[0:2]>/<key>
std::filesystem::path entry_dir(const std::filesystem::path& cache_dir, const std::string& key);

// File names inside an entry.
std::string source_file_name(common::Format format);    // candidate.cu / candidate.cpp / candidate.py
std::string artifact_file_name(common::Format format);  // candidate.so, or "." (the entry) for kernelbench

// Statuses worth storing: a rerun would give the same answer.
bool is_cacheable(common::Status status);

// The finished entry at `entry` if its key.txt equals key_text, its result.json parses and (for OK)
// its artifact exists; nullopt otherwise (a miss). Messages are rewritten to `display_name`.
// Reads two small files and stats one: well under a millisecond.
std::optional<CompileResult> read_entry(const std::filesystem::path& entry, const std::string& key_text,
                                        const std::string& display_name);

// Writes key.txt, compile.log and (last, atomically) result.json into `dir`. result.artifact is
// stored relative to the entry.
common::Fallible write_entry_files(const std::filesystem::path& dir, const std::string& key_text,
                                 const CompileResult& result, const std::string& display_name,
                                 const std::string& full_log);

// Renames the finished build folder `scratch` to `entry`. If an entry is already there and valid
// (an identical compile won the race) and !replace, the winner's result is returned and scratch is
// removed; an invalid entry, or any entry when `replace`, is moved aside first. `built` is this
// build's result; its artifact is re-pointed into the published folder.
CompileResult publish(const std::filesystem::path& cache_dir, const std::filesystem::path& scratch,
                      const std::filesystem::path& entry, const std::string& key_text,
                      const std::string& display_name, bool replace, CompileResult built);

}  // namespace kernelrl::compile::detail
