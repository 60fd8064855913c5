#include "compile/import_check.hpp"

#include <elf.h>

#include <array>
#include <cstring>
#include <string_view>

#include "common/fs.hpp"

namespace kernelrl::compile {

namespace {

constexpr std::uint64_t kMaxLibraryBytes = 256ull << 20;  // the compiler's own output limit

// Run-time loading and lookup, the routes to the loader's list of libraries, and CUDA's own
// run-time lookup of driver functions (a way to any driver entry point without importing it).
constexpr std::array<std::string_view, 20> kLookupSymbols{
    "dlopen",          "dlmopen",         "dlsym",           "dlvsym",        "dladdr",      "dladdr1",
    "dlinfo",          "dl_iterate_phdr", "_dl_find_object", "_r_debug",      "getauxval",   "__libc_dlopen_mode",
    "__libc_dlsym",    "__libc_dlvsym",   "_dl_debug_state", "__libc_dlclose", "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion", "cuGetProcAddress", "cuGetProcAddress_v2"};

// Candidates run on the stream they are given: work on a stream of their own can escape the
// timer's end mark.
constexpr std::array<std::string_view, 5> kOwnStreams{"cudaStreamCreate", "cudaStreamCreateWithFlags",
                                                      "cudaStreamCreateWithPriority", "cuStreamCreate",
                                                      "cuStreamCreateWithPriority"};

// Native candidates start no host threads either (a kernel launched from one after the call
// returns escapes the timer; a GPU candidate has no use for them). std::thread, std::jthread and
// std::async start theirs in libstdc++ (std::thread::_M_start_thread, any overload).
constexpr std::array<std::string_view, 2> kOwnThreads{"pthread_create", "thrd_create"};
constexpr std::string_view kStdThreadStartPrefix = "_ZNSt6thread15_M_start_thread";

// Weak references every g++ / nvcc shared library has (crtstuff, gprof hook).
constexpr std::array<std::string_view, 4> kToolchainWeak{"_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable",
                                                         "__cxa_finalize", "__gmon_start__"};

template <typename T>
bool read_at(const std::string& bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace

common::Expected<std::vector<ImportedSymbol>> imported_symbols(const std::filesystem::path& library) {
  auto bytes = common::read_file(library, kMaxLibraryBytes);
  if (!bytes) return bytes.error();
  const std::string where = library.string() + ": ";
  Elf64_Ehdr header{};
  if (!read_at(*bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return common::Error{where + "not an ELF file"};
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return common::Error{where + "not a 64-bit ELF file"};
  if (header.e_shnum == 0 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return common::Error{where + "no section headers to read the dynamic symbols from"};
  }
  auto section = [&](std::uint64_t index, Elf64_Shdr& out) {
    return index < header.e_shnum && read_at(*bytes, header.e_shoff + index * sizeof(Elf64_Shdr), out);
  };
  std::vector<ImportedSymbol> imports;
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols{};
    if (!section(i, symbols)) return common::Error{where + "section header " + std::to_string(i) + " is out of bounds"};
    if (symbols.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr names{};
    if (!section(symbols.sh_link, names) || names.sh_offset > bytes->size() ||
        bytes->size() - names.sh_offset < names.sh_size) {
      return common::Error{where + "the dynamic symbols' string table is out of bounds"};
    }
    const std::string_view strings(bytes->data() + names.sh_offset, names.sh_size);
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= symbols.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      if (!read_at(*bytes, symbols.sh_offset + off, sym)) return common::Error{where + "a dynamic symbol is out of bounds"};
      if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
      if (sym.st_name >= strings.size()) return common::Error{where + "a symbol name is out of bounds"};
      const auto end = strings.find('\0', sym.st_name);
      if (end == std::string_view::npos) return common::Error{where + "a symbol name is not terminated"};
      imports.push_back({std::string(strings.substr(sym.st_name, end - sym.st_name)),
                         ELF64_ST_BIND(sym.st_info) == STB_WEAK});
    }
  }
  return imports;
}

namespace {

// The first import named in `names`, or nullopt.
template <std::size_t N>
std::optional<std::string> first_named(const std::vector<ImportedSymbol>& imports,
                                       const std::array<std::string_view, N>& names) {
  for (const auto& s : imports) {
    for (auto name : names) {
      if (s.name == name) return s.name;
    }
  }
  return std::nullopt;
}

std::string own_streams_message(const std::string& name) {
  return "the candidate calls " + name +
         ": candidates run their kernels on the stream they are given (work on a stream of its own escapes the "
         "timer)";
}

std::string own_threads_message(const std::string& name) {
  return "the candidate calls " + name +
         ": native candidates start no host threads (a kernel launched from one after the call returns escapes "
         "the timer)";
}

std::string lookup_message(const std::string& name) {
  return "the candidate uses " + name +
         ": loading libraries or looking up symbols at run time is not allowed (cuBLAS, cuDNN, torch and the "
         "evaluator's own code are off limits; write the kernels)";
}

}  // namespace

std::optional<std::string> forbidden_import(const std::vector<ImportedSymbol>& imports, bool native) {
  if (native) {
    if (auto name = first_named(imports, kOwnStreams)) return own_streams_message(*name);
    if (auto name = first_named(imports, kOwnThreads)) return own_threads_message(*name);
    for (const auto& s : imports) {
      if (s.name.rfind(kStdThreadStartPrefix, 0) == 0) return own_threads_message("std::thread (" + s.name + ")");
    }
  }
  if (auto name = first_named(imports, kLookupSymbols)) return lookup_message(*name);
  for (const auto& s : imports) {
    if (!s.weak) continue;
    bool toolchain = false;
    for (auto allowed : kToolchainWeak) toolchain = toolchain || s.name == allowed;
    if (!toolchain) {
      return "the candidate declares " + s.name +
             " as a weak undefined symbol: every function a candidate calls must come from the libraries it "
             "links (a weak reference would bind to whatever the evaluating process has loaded)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> forbidden_extension_import(const std::vector<ImportedSymbol>& imports) {
  if (auto name = first_named(imports, kOwnStreams)) return own_streams_message(*name);
  if (auto name = first_named(imports, kLookupSymbols)) return lookup_message(*name);
  return std::nullopt;
}

}  // namespace kernelrl::compile
