#include "compile/import_check.hpp"

#include <elf.h>

#include <array>
#include <cstring>
#include <string_view>

#include "compile/elf_file.hpp"

namespace kernelrl::compile {

namespace {


// Run-time loading and lookup, the routes to the loader's list of libraries, and CUDA's own
// run-time lookup of driver functions (a way to any driver entry point without importing it).
constexpr std::array<std::string_view, 20> kLookupSymbols{
    "dlopen",          "dlmopen",         "dlsym",           "dlvsym",        "dladdr",      "dladdr1",
    "dlinfo",          "dl_iterate_phdr", "_dl_find_object", "_r_debug",      "getauxval",   "__libc_dlopen_mode",
    "__libc_dlsym",    "__libc_dlvsym",   "_dl_debug_state", "__libc_dlclose", "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion", "cuGetProcAddress", "cuGetProcAddress_v2"};

// kernelbench extensions run on torch's stream, as KernelBench's own static checker requires (its
// stream-injection rule); native candidates may use streams of their own (forbidden_import).
constexpr std::array<std::string_view, 5> kOwnStreams{"cudaStreamCreate", "cudaStreamCreateWithFlags",
                                                      "cudaStreamCreateWithPriority", "cuStreamCreate",
                                                      "cuStreamCreateWithPriority"};

// Native candidates start no host threads either (a kernel launched from one after the call
// returns escapes the timer; a GPU candidate has no use for them). std::thread, std::jthread and
// std::async start theirs in libstdc++ (std::thread::_M_start_thread, any overload).
constexpr std::array<std::string_view, 2> kOwnThreads{"pthread_create", "thrd_create"};
constexpr std::string_view kStdThreadStartPrefix = "_ZNSt6thread15_M_start_thread";

// Routes to the process's file descriptors (the evaluator's report channel among them), to files
// and folders (opening, creating, renaming, deleting, changing them), sockets and other processes,
// raw system calls, signal handlers (code that runs after a call has returned) and memory
// protection: a candidate computes into its outputs and needs none of them.
constexpr std::array<std::string_view, 101> kSystemAccess{
    "write", "__write", "writev", "pwrite", "pwrite64", "pwritev", "pwritev2", "pwritev64", "pwritev64v2", "send",
    "sendto", "sendmsg", "sendmmsg", "sendfile", "sendfile64", "splice", "tee", "vmsplice", "copy_file_range",
    "aio_write", "aio_write64", "lio_listio", "lio_listio64", "_IO_do_write", "dup", "dup2", "dup3", "fcntl",
    "fcntl64", "__fcntl", "fdopen", "open", "open64", "__open_2", "__open64_2", "openat", "openat64", "__openat_2",
    "__openat64_2", "creat", "creat64", "fopen", "fopen64", "freopen", "freopen64", "socket", "socketpair",
    "connect", "syscall", "sigaction", "__sigaction", "signal", "sigset", "bsd_signal", "__sysv_signal", "ssignal",
    "mprotect", "pkey_mprotect", "process_vm_writev", "ptrace", "prctl", "memfd_create", "io_uring_setup", "mkdir",
    "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat", "symlink",
    "symlinkat", "truncate", "truncate64", "ftruncate", "ftruncate64", "chmod", "fchmod", "fchmodat", "chown",
    "fchown", "lchown", "fchownat", "mknod", "mknodat", "remove", "tmpfile", "tmpfile64", "mkstemp", "mkstemp64",
    "mkostemp", "mkostemp64", "mkstemps", "mkdtemp", "utime", "utimes", "utimensat", "futimens"};
// The C++ library's ways to the same: file streams and buffers, fd-backed buffers, std::filesystem.
constexpr std::array<std::string_view, 7> kSystemAccessPrefixes{
    "_ZNSt13basic_filebuf", "_ZNSt14basic_ofstream", "_ZNSt13basic_fstream", "_ZNSt12__basic_file",
    "_ZNSt10filesystem",    "_ZN9__gnu_cxx13stdio_filebuf", "_ZN9__gnu_cxx18stdio_sync_filebuf"};

// Weak references every g++ / nvcc shared library has (crtstuff, gprof hook).
constexpr std::array<std::string_view, 4> kToolchainWeak{"_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable",
                                                         "__cxa_finalize", "__gmon_start__"};


}  // namespace

common::Expected<std::vector<ImportedSymbol>> imported_symbols(const std::filesystem::path& library) {
  auto elf = read_elf(library);
  if (!elf) return elf.error();
  const std::string where = library.string() + ": ";
  std::vector<ImportedSymbol> imports;
  for (const auto& symbols : elf->sections) {
    if (symbols.type != SHT_DYNSYM) continue;
    if (symbols.link >= elf->sections.size()) return common::Error{where + "the dynamic symbols have no string table"};
    const std::string_view strings = elf->contents(elf->sections[symbols.link]);
    const std::string_view table = elf->contents(symbols);
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= table.size(); off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      std::memcpy(&sym, table.data() + off, sizeof sym);
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

std::optional<std::string> system_calls(const std::vector<ImportedSymbol>& imports) {
  std::optional<std::string> name = first_named(imports, kSystemAccess);
  for (const auto& s : imports) {
    for (auto prefix : kSystemAccessPrefixes) {
      if (!name && s.name.rfind(prefix, 0) == 0) name = s.name;
    }
  }
  if (!name) return std::nullopt;
  return "the candidate calls " + *name +
         ": candidates make no system calls of their own (no files, descriptors, sockets, signal handlers or "
         "memory protection; the evaluator's process and its report channel are off limits): compute into the "
         "outputs";
}

std::string lookup_message(const std::string& name) {
  return "the candidate uses " + name +
         ": loading libraries or looking up symbols at run time is not allowed (cuBLAS, cuDNN, torch and the "
         "evaluator's own code are off limits; write the kernels)";
}

}  // namespace

std::optional<std::string> forbidden_import(const std::vector<ImportedSymbol>& imports, bool native,
                                            bool system_access) {
  // A native candidate may create streams of its own (a CUDA graph captured on a private stream,
  // kernels on several streams at once): its process synchronises its whole context before it
  // answers, and the child's clock stops only once the GPU has come back to the child's context
  // (eval/timing.cpp), so work on any stream is timed.
  if (native) {
    if (auto name = first_named(imports, kOwnThreads)) return own_threads_message(*name);
    for (const auto& s : imports) {
      if (s.name.rfind(kStdThreadStartPrefix, 0) == 0) return own_threads_message("std::thread (" + s.name + ")");
    }
  }
  if (auto name = first_named(imports, kLookupSymbols)) return lookup_message(*name);
  if (auto refused = system_access ? system_calls(imports) : std::nullopt) return refused;
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

std::optional<std::string> forbidden_extension_symbol(const std::string& name, bool system_access) {
  const std::vector<ImportedSymbol> one{{name, false}};
  if (auto found = first_named(one, kOwnStreams)) return own_streams_message(*found);
  if (auto found = first_named(one, kLookupSymbols)) return lookup_message(*found);
  return system_access ? system_calls(one) : std::nullopt;
}

std::optional<std::string> forbidden_extension_import(const std::vector<ImportedSymbol>& imports,
                                                      bool system_access) {
  for (const auto& s : imports) {
    if (auto refused = forbidden_extension_symbol(s.name, system_access)) return refused;
  }
  return std::nullopt;
}

}  // namespace kernelrl::compile
