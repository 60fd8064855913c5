#include "compile/elf_file.hpp"

#include <elf.h>

#include <cstring>

#include "common/fs.hpp"

namespace kernelrl::compile {
namespace {

constexpr std::uint64_t kMaxLibraryBytes = 256ull << 20;

template <typename T>
bool read_at(const std::string& bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

bool in_bounds(const std::string& bytes, std::uint64_t offset, std::uint64_t size) {
  return offset <= bytes.size() && bytes.size() - offset >= size;
}

}  // namespace

std::string_view ElfFile::contents(const ElfSection& s) const {
  if (s.type == SHT_NOBITS) return {};
  return std::string_view(bytes).substr(s.offset, s.size);
}

common::Expected<ElfFile> read_elf(const std::filesystem::path& path) {
  auto bytes = common::read_file(path, kMaxLibraryBytes);
  if (!bytes) return bytes.error();
  const std::string where = path.string() + ": ";
  Elf64_Ehdr header{};
  if (!read_at(*bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return common::Error{where + "not an ELF file"};
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return common::Error{where + "not a 64-bit ELF file"};
  if (header.e_shnum == 0 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return common::Error{where + "no section headers"};
  }
  std::vector<Elf64_Shdr> headers(header.e_shnum);
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    if (!read_at(*bytes, header.e_shoff + i * sizeof(Elf64_Shdr), headers[i])) {
      return common::Error{where + "section header " + std::to_string(i) + " is out of bounds"};
    }
    if (headers[i].sh_type != SHT_NOBITS && !in_bounds(*bytes, headers[i].sh_offset, headers[i].sh_size)) {
      return common::Error{where + "section " + std::to_string(i) + " is out of bounds"};
    }
  }
  std::string_view names;
  if (header.e_shstrndx < headers.size() && headers[header.e_shstrndx].sh_type == SHT_STRTAB) {
    names = std::string_view(*bytes).substr(headers[header.e_shstrndx].sh_offset, headers[header.e_shstrndx].sh_size);
  }
  ElfFile file;
  file.path = path;
  file.machine = header.e_machine;
  for (const auto& h : headers) {
    ElfSection s;
    if (h.sh_name < names.size()) {
      const auto end = names.find('\0', h.sh_name);
      s.name = std::string(names.substr(h.sh_name, end == std::string_view::npos ? end : end - h.sh_name));
    }
    s.type = h.sh_type;
    s.flags = h.sh_flags;
    s.offset = h.sh_offset;
    s.size = h.sh_type == SHT_NOBITS ? 0 : h.sh_size;
    s.link = h.sh_link;
    file.sections.push_back(std::move(s));
  }
  file.bytes = std::move(*bytes);
  return file;
}

}  // namespace kernelrl::compile
