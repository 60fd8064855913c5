#include "compile/system_call_check.hpp"

#include <elf.h>

#include <array>
#include <sstream>
#include <string_view>

#include "common/subprocess.hpp"
#include "compile/elf_file.hpp"

namespace kernelrl::compile {
namespace {

constexpr std::array<std::string_view, 3> kX86Patterns{std::string_view("\x0f\x05", 2), std::string_view("\x0f\x34", 2),
                                                       std::string_view("\xcd\x80", 2)};
constexpr std::array<std::string_view, 3> kX86Mnemonics{"syscall", "sysenter", "int"};

bool has_x86_pattern(std::string_view code) {
  for (auto p : kX86Patterns) {
    if (code.find(p) != std::string_view::npos) return true;
  }
  return false;
}

std::string refusal(const std::string& instruction, const std::string& where) {
  return "the candidate's machine code makes a system call itself (" + instruction + " at " + where +
         "): candidates make no system calls of their own (the evaluator's process and its report channel are off "
         "limits): compute into the outputs";
}

// objdump's disassembly of one section: the first real system-call instruction, or nullopt.
common::Expected<std::optional<std::string>> x86_confirmed(const ElfFile& elf, const ElfSection& section) {
  auto run = common::run_process({"objdump", "-d", "--no-show-raw-insn", "-j", section.name, elf.path.string()});
  if (!run) return common::make_error("cannot run objdump to check the machine code: " + run.error().message);
  if (!run->ok()) return common::make_error("objdump failed on " + elf.path.string() + ": " + run->output.substr(0, 300));
  std::istringstream lines(run->output);
  for (std::string line; std::getline(lines, line);) {
    // "    1139:\tsyscall" / "    113b:\tint    $0x80"
    const auto colon = line.find(":\t");
    if (colon == std::string::npos) continue;
    std::string_view insn = std::string_view(line).substr(colon + 2);
    const auto word_end = insn.find_first_of(" \t");
    const std::string_view mnemonic = insn.substr(0, word_end);
    for (auto m : kX86Mnemonics) {
      if (mnemonic != m) continue;
      if (m == "int" && insn.find("$0x80") == std::string_view::npos) continue;
      const std::string address = line.substr(line.find_first_not_of(' '), colon - line.find_first_not_of(' '));
      return std::optional<std::string>(refusal(std::string(insn.substr(0, insn.find_last_not_of(' ') + 1)),
                                                "0x" + address + " in " + section.name));
    }
  }
  return std::optional<std::string>();
}

}  // namespace

common::Expected<std::optional<std::string>> raw_system_call(const std::filesystem::path& library) {
  auto elf = read_elf(library);
  if (!elf) return elf.error();
  for (const auto& section : elf->sections) {
    if ((section.flags & SHF_EXECINSTR) == 0 || section.type == SHT_NOBITS) continue;
    if (elf->machine != EM_X86_64) {  // fails closed: nothing unchecked is loaded
      return common::make_error(library.string() + ": machine code for ELF machine " + std::to_string(elf->machine) +
                                ", which this check does not read (x86-64 only)");
    }
    if (!has_x86_pattern(elf->contents(section))) continue;
    auto found = x86_confirmed(*elf, section);
    if (!found || *found) return found;
  }
  return std::optional<std::string>();
}

}  // namespace kernelrl::compile
