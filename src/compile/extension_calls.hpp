// Who, inside a built kernelbench extension, calls what. torch's load_inline links extensions with
// the machine's C++ compiler, and some toolchains (the GPU machine's g++ 13) link the C++ runtime
// statically: the extension then carries libstdc++'s own code, and with it the runtime's own system
// calls (__cxa_guard_acquire's futex through `syscall`, random_device's `open`, the file buffers'
// `write`). Those calls are the toolchain's, not the candidate's, and refusing them refuses every
// honest extension on such a machine.
//
// This tells them apart by the code that makes the call: a function of the library whose name and
// size equal a definition in the compiler's static runtime archives (libstdc++.a, libsupc++.a,
// libgcc.a, libgcc_eh.a) is the runtime's; every other function (the candidate's own code and what
// its headers inlined into it) is the candidate's, and may not refer to a forbidden symbol (an
// import such as `syscall`, or a runtime function such as std::basic_ofstream::open that the static
// runtime brought in). The disassembly comes from objdump, the symbol sizes from nm.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::compile {

// Names and sizes of the functions the compiler's static runtime archives define (empty when the
// compiler has none of them, e.g. a toolchain that links libstdc++ as a shared library).
struct RuntimeDefinitions {
  std::map<std::string, std::set<std::uint64_t>> sizes_by_name;
  std::vector<std::filesystem::path> archives;  // the archives that were read
  bool defines(const std::string& name, std::uint64_t size) const;
};

// Reads the static runtime archives of the C++ compiler `cxx` (as `cxx -print-file-name=` finds
// them). Cached per compiler for the life of the process; thread-safe. An Error when the compiler
// or nm cannot be run.
common::Expected<std::shared_ptr<const RuntimeDefinitions>> static_runtime_definitions(const std::string& cxx);

// One function of a library and the symbols its code refers to (calls, jumps, address loads;
// `name@plt` and `name@GLIBC_2.2.5` are reported as `name`).
struct FunctionReferences {
  std::string name;        // the symbol at the function's start, as in the symbol table (mangled)
  std::uint64_t size = 0;  // from the symbol table; 0 when unknown
  bool runtime = false;    // the toolchain's static runtime (name and size match a definition)
  std::set<std::string> refers_to;
};

// Every function in the executable sections of `library` with what it refers to. An Error names
// the file when objdump or nm cannot read it.
common::Expected<std::vector<FunctionReferences>> function_references(const std::filesystem::path& library,
                                                                      const RuntimeDefinitions& runtime);

// The symbols imported by `library` that a data relocation (not a call through the PLT or a load
// through the GOT) refers to: the address of such a function stored in a table, which no
// disassembly attributes to a function. An Error names the file when it cannot be read.
common::Expected<std::set<std::string>> imports_referenced_from_data(const std::filesystem::path& library);

// The C++ compiler an extension was linked with: the `cxx = ...` line of the build.ninja beside
// it, else "c++" (torch's default).
std::string extension_linker(const std::filesystem::path& library);

// Why code of the candidate's in `library` (any function but the static runtime's of the compiler
// that linked it) refers to a symbol compile/import_check.hpp forbids extensions, or a data
// relocation stores such an import's address: the message names the symbol and the function. nullopt
// when none does. An Error when the tools cannot read the library.
common::Expected<std::optional<std::string>> candidate_forbidden_reference(const std::filesystem::path& library,
                                                                          bool system_access = true);

// `name` demangled when it is a C++ symbol, else unchanged.
std::string demangled(const std::string& name);

}  // namespace kernelrl::compile
