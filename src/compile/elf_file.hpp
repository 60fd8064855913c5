// The section table of an ELF64 file, read without loading it: what the checks on a built
// candidate library (its imports, its machine code) look at before anything may load it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::compile {

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;   // SHT_*
  std::uint64_t flags = 0;  // SHF_*
  std::uint64_t offset = 0;
  std::uint64_t size = 0;   // bytes in the file (0 for SHT_NOBITS)
  std::uint32_t link = 0;   // index of the associated section (a symbol table's strings)
};

struct ElfFile {
  std::filesystem::path path;
  std::uint16_t machine = 0;  // EM_X86_64, EM_AARCH64, ...
  std::string bytes;
  std::vector<ElfSection> sections;

  // The section's bytes; every section's range was checked against the file when it was read.
  std::string_view contents(const ElfSection& s) const;
};

// Reads `path` (at most 256 MiB, the compiler's own output limit). An Error names the file and what
// is wrong with it (not ELF64, truncated, a section out of bounds).
common::Expected<ElfFile> read_elf(const std::filesystem::path& path);

}  // namespace kernelrl::compile
