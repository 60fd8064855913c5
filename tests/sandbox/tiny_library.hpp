// Test helper: a shared library built fresh with the system's C compiler, so a confined child's
// dlopen really maps a new library (libm and the like are already mapped in the test process).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace kernelrl::sandbox::testing {

// Symbol the library exports: returns its argument plus one (and touches a thread-local, which the
// loader sets up with malloc'd memory).
inline constexpr const char* kTinySymbol = "kernelrl_tiny_plus_one";

// Builds `dir`/libkernelrl_tiny.so; returns its path, or "" when no C compiler (cc) could build it.
inline std::string build_tiny_library(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path source = dir / "tiny.c", library = dir / "libkernelrl_tiny.so";
  std::ofstream(source) << "static __thread int calls;\n"
                        << "int " << kTinySymbol << "(int x) { ++calls; return x + calls; }\n";
  const std::string command = "cc -shared -fPIC -O1 -o '" + library.string() + "' '" + source.string() + "' 2>/dev/null";
  if (std::system(command.c_str()) != 0 || !std::filesystem::exists(library)) return "";
  return library.string();
}

}  // namespace kernelrl::sandbox::testing
