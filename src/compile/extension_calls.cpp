#include "compile/extension_calls.hpp"

#include <cxxabi.h>
#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "common/subprocess.hpp"
#include "compile/elf_file.hpp"
#include "compile/import_check.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;

// The archives a g++-family link takes the C++ runtime from when it is linked statically.
constexpr const char* kRuntimeArchives[] = {"libstdc++.a", "libsupc++.a", "libgcc.a", "libgcc_eh.a"};

common::RunLimits tool_limits() {
  common::RunLimits limits;
  limits.wall_time = std::chrono::seconds(120);
  limits.max_output_bytes = std::size_t{1} << 30;  // a disassembly of a statically linked runtime is tens of MB
  return limits;
}

// One `nm -P -S --defined-only` line: "name type value size" (size absent for some symbols).
struct NmSymbol {
  std::string name;
  char type = 0;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

bool parse_nm_line(const std::string& line, NmSymbol& out) {
  std::istringstream in(line);
  std::string type, value, size;
  if (!(in >> out.name >> type >> value)) return false;
  in >> size;
  if (type.size() != 1) return false;
  out.type = type[0];
  out.value = std::strtoull(value.c_str(), nullptr, 16);
  out.size = size.empty() ? 0 : std::strtoull(size.c_str(), nullptr, 16);
  return true;
}

bool is_code(char type) { return type == 'T' || type == 't' || type == 'W' || type == 'w'; }

common::Expected<std::vector<NmSymbol>> defined_code_symbols(const fs::path& file) {
  auto run = common::run_process({"nm", "-P", "-S", "--defined-only", file.string()}, {}, {}, tool_limits());
  if (!run) return common::make_error("cannot run nm: " + run.error().message);
  if (!run->ok()) return common::make_error("nm failed on " + file.string() + ": " + run->output.substr(0, 300));
  std::vector<NmSymbol> symbols;
  std::istringstream lines(run->output);
  for (std::string line; std::getline(lines, line);) {
    NmSymbol s;
    if (parse_nm_line(line, s) && is_code(s.type)) symbols.push_back(std::move(s));
  }
  return symbols;
}

// "12a360 <__cxa_guard_acquire>:" -> address and name; false for other lines.
bool parse_label(const std::string& line, std::uint64_t& address, std::string& name) {
  if (line.size() < 5 || line.back() != ':' || line[line.size() - 2] != '>') return false;
  const auto open = line.find(" <");
  if (open == std::string::npos || open == 0) return false;
  for (std::size_t i = 0; i < open; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(line[i]))) return false;
  }
  address = std::strtoull(line.substr(0, open).c_str(), nullptr, 16);
  name = line.substr(open + 2, line.size() - open - 4);
  return true;
}

// The symbol named by an operand annotation "<name@plt>", "<name@GLIBC_2.2.5>", "<name+0x1c>",
// with the version, PLT and offset suffixes removed.
std::string annotated_symbol(std::string_view inside) {
  if (const auto plus = inside.find('+'); plus != std::string_view::npos) inside = inside.substr(0, plus);
  if (const auto at = inside.find('@'); at != std::string_view::npos) inside = inside.substr(0, at);
  return std::string(inside);
}

}  // namespace

bool RuntimeDefinitions::defines(const std::string& name, std::uint64_t size) const {
  const auto it = sizes_by_name.find(name);
  return it != sizes_by_name.end() && it->second.count(size) > 0;
}

common::Expected<std::shared_ptr<const RuntimeDefinitions>> static_runtime_definitions(const std::string& cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const RuntimeDefinitions>> by_compiler;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = by_compiler.find(cxx); it != by_compiler.end()) return it->second;
  auto defs = std::make_shared<RuntimeDefinitions>();
  for (const char* archive : kRuntimeArchives) {
    auto run = common::run_process({cxx, std::string("-print-file-name=") + archive}, {}, {}, tool_limits());
    if (!run) return common::make_error("cannot run the extension's C++ compiler '" + cxx + "': " + run.error().message);
    std::string path = run->output.substr(0, run->output.find('\n'));
    // An archive the compiler does not have comes back as its bare name.
    std::error_code ec;
    if (!run->ok() || path.find('/') == std::string::npos || !fs::is_regular_file(path, ec)) continue;
    auto symbols = defined_code_symbols(path);
    if (!symbols) return symbols.error();
    for (const auto& s : *symbols) defs->sizes_by_name[s.name].insert(s.size);
    defs->archives.push_back(fs::weakly_canonical(path, ec));
  }
  by_compiler[cxx] = defs;
  return std::shared_ptr<const RuntimeDefinitions>(defs);
}

common::Expected<std::vector<FunctionReferences>> function_references(const fs::path& library,
                                                                      const RuntimeDefinitions& runtime) {
  auto symbols = defined_code_symbols(library);
  if (!symbols) return symbols.error();
  std::map<std::uint64_t, std::vector<const NmSymbol*>> at_address;
  for (const auto& s : *symbols) at_address[s.value].push_back(&s);

  auto run = common::run_process({"objdump", "-d", "-w", "--no-show-raw-insn", library.string()}, {}, {}, tool_limits());
  if (!run) return common::make_error("cannot run objdump: " + run.error().message);
  if (!run->ok()) return common::make_error("objdump failed on " + library.string() + ": " + run->output.substr(0, 300));

  std::vector<FunctionReferences> functions;
  bool in_plt = false;  // PLT stubs jump through the GOT for everyone: they are nobody's code
  std::istringstream lines(run->output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Disassembly of section ", 0) == 0) {
      in_plt = line.find(".plt") != std::string::npos;
      continue;
    }
    if (in_plt) continue;
    std::uint64_t address = 0;
    std::string name;
    if (parse_label(line, address, name)) {
      FunctionReferences f;
      f.name = name;
      if (auto it = at_address.find(address); it != at_address.end()) {
        for (const NmSymbol* s : it->second) {
          if (s->name == name) f.size = s->size;
        }
      }
      f.runtime = runtime.defines(f.name, f.size);
      functions.push_back(std::move(f));
      continue;
    }
    if (functions.empty() || line.find(":\t") == std::string::npos) continue;
    // Operands name their targets in angle brackets: "call 1030 <syscall@plt>", "# 3fc8 <open@GLIBC_2.2.5>".
    for (auto open = line.find('<'); open != std::string::npos; open = line.find('<', open + 1)) {
      const auto close = line.find('>', open);
      if (close == std::string::npos) break;
      functions.back().refers_to.insert(annotated_symbol(std::string_view(line).substr(open + 1, close - open - 1)));
    }
  }
  return functions;
}

common::Expected<std::set<std::string>> imports_referenced_from_data(const fs::path& library) {
  auto elf = read_elf(library);
  if (!elf) return elf.error();
  std::set<std::string> names;
  for (const auto& section : elf->sections) {
    if (section.type != SHT_RELA || section.link >= elf->sections.size()) continue;
    const ElfSection& symtab = elf->sections[section.link];
    if (symtab.type != SHT_DYNSYM || symtab.link >= elf->sections.size()) continue;
    const std::string_view symbols = elf->contents(symtab);
    const std::string_view strings = elf->contents(elf->sections[symtab.link]);
    const std::string_view relocations = elf->contents(section);
    for (std::size_t off = 0; off + sizeof(Elf64_Rela) <= relocations.size(); off += sizeof(Elf64_Rela)) {
      Elf64_Rela rela{};
      std::memcpy(&rela, relocations.data() + off, sizeof rela);
      const auto type = ELF64_R_TYPE(rela.r_info);
      const auto index = ELF64_R_SYM(rela.r_info);
      if (index == 0 || type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) continue;
      if ((index + 1) * sizeof(Elf64_Sym) > symbols.size()) {
        return common::make_error(library.string() + ": a relocation names a symbol out of bounds");
      }
      Elf64_Sym sym{};
      std::memcpy(&sym, symbols.data() + index * sizeof(Elf64_Sym), sizeof sym);
      if (sym.st_shndx != SHN_UNDEF || sym.st_name >= strings.size()) continue;
      const auto end = strings.find('\0', sym.st_name);
      names.insert(std::string(strings.substr(sym.st_name, end == std::string_view::npos ? end : end - sym.st_name)));
    }
  }
  return names;
}

std::string extension_linker(const fs::path& library) {
  std::ifstream ninja(library.parent_path() / "build.ninja");
  for (std::string line; std::getline(ninja, line);) {
    if (line.rfind("cxx = ", 0) == 0) {
      std::string cxx = line.substr(6);
      while (!cxx.empty() && (cxx.back() == ' ' || cxx.back() == '\r')) cxx.pop_back();
      if (!cxx.empty()) return cxx;
    }
  }
  return "c++";
}

common::Expected<std::optional<std::string>> candidate_forbidden_reference(const fs::path& library,
                                                                           bool system_access) {
  auto runtime = static_runtime_definitions(extension_linker(library));
  if (!runtime) return runtime.error();
  auto functions = function_references(library, **runtime);
  if (!functions) return functions.error();
  for (const auto& f : *functions) {
    if (f.runtime) continue;
    for (const auto& symbol : f.refers_to) {
      if (auto refused = forbidden_extension_symbol(symbol, system_access)) {
        return std::optional<std::string>(*refused + " (called from " + demangled(f.name) + ")");
      }
    }
  }
  auto from_data = imports_referenced_from_data(library);
  if (!from_data) return from_data.error();
  for (const auto& symbol : *from_data) {
    if (auto refused = forbidden_extension_symbol(symbol, system_access)) {
      return std::optional<std::string>(*refused + " (its address is stored in the library's data)");
    }
  }
  return std::optional<std::string>();
}

std::string demangled(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

}  // namespace kernelrl::compile
