// What a built candidate library imports, checked before it is ever loaded. The link uses -z defs,
// so every symbol must come from the libraries on the link line; two ways around that remain and
// are refused here: run-time lookup (dlopen / dlsym and the other ways to reach the process's
// loaded libraries, e.g. cuBLAS, torch or the evaluator's embedded Python), and weak undefined
// symbols, which -z defs lets through and the dynamic loader then binds to whatever the process
// holds. The toolchain's own weak references (crtstuff's TM clone table, __cxa_finalize,
// __gmon_start__) are allowed. No candidate may import system calls; native candidates also may not
// create streams or host threads.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::compile {

struct ImportedSymbol {
  std::string name;
  bool weak = false;
};

// The undefined symbols of an ELF64 shared object's dynamic symbol table. An Error names the file
// and what is wrong with it (not ELF64, truncated, bad offsets).
common::Expected<std::vector<ImportedSymbol>> imported_symbols(const std::filesystem::path& library);

// Why `imports` may not be loaded (a message a model can act on), or nullopt when they are fine.
// `native`: a native candidate, which also may not create CUDA streams or host threads of its own.
// `system_access`: no candidate may import system calls (write, syscall, open, dup, socket, signal
// handlers, mprotect, file streams, ...): the evaluator's report channel is a descriptor of the
// same process. False only to test the sandbox behind this check.
std::optional<std::string> forbidden_import(const std::vector<ImportedSymbol>& imports, bool native = false,
                                            bool system_access = true);

// The same for an extension a kernelbench candidate built with torch (load_inline): built against
// the process's torch and Python, so unresolved and weak symbols are normal there; run-time lookup
// and CUDA streams of its own are refused (host threads are not: on the CPU they are a technique,
// as for host candidates), and system calls as for forbidden_import.
std::optional<std::string> forbidden_extension_import(const std::vector<ImportedSymbol>& imports,
                                                      bool system_access = true);

// The same rule for one symbol a kernelbench extension imports or refers to (a function of the C++
// runtime linked into it counts too: std::basic_ofstream's members, std::filesystem): why it may not
// be used, or nullopt.
std::optional<std::string> forbidden_extension_symbol(const std::string& name, bool system_access = true);

}  // namespace kernelrl::compile
