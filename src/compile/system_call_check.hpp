// Whether a built native or host candidate library makes system calls with its own instructions
// (x86-64 `syscall`, `sysenter`, `int $0x80`), the way around the imports
// compile/import_check.hpp refuses (write, syscall, ...): a candidate computes into its outputs and
// has no use for them, while the evaluator's report channel sits in the same process. The
// executable sections are searched for those instructions' bytes and, where bytes can match inside
// longer instructions, objdump's disassembly says whether a real one is there. Checked before the
// library is ever loaded. Libraries for other architectures are refused (an Error): x86-64 only.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/expected.hpp"

namespace kernelrl::compile {

// Why the library may not be loaded (a message a model can act on, naming the instruction and its
// address), or nullopt. An Error when the file cannot be read or objdump cannot be run.
common::Expected<std::optional<std::string>> raw_system_call(const std::filesystem::path& library);

}  // namespace kernelrl::compile
