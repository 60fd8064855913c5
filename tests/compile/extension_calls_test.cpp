// compile/extension_calls: a kernelbench extension's forbidden calls are the candidate's only when
// the candidate's own code makes them. Toolchains that link the C++ runtime statically (the GPU
// machine's g++ 13 under torch's load_inline) put the runtime's own `syscall`, `open` and `write`
// into every extension; an honest extension must pass there, and a candidate that makes the same
// calls itself must not. The libraries here are built with the machine's g++, with and without
// -static-libstdc++, the way torch links an extension.
#include "compile/extension_calls.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include "common/fs.hpp"
#include "common/subprocess.hpp"
#include "compile/import_check.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;

// What an honest extension's C++ typically holds: a function-local static (its guard takes a futex
// through syscall in the static runtime) and a message on stderr through iostreams.
constexpr const char* kHonest = R"(
#include <iostream>
#include <string>
#include <vector>
static std::vector<float>& table() { static std::vector<float> t(16, 1.0f); return t; }
extern "C" float forward(const float* x, int n) {
  float s = 0; for (int i = 0; i < n; ++i) s += x[i] * table()[i % 16];
  if (n < 0) std::cerr << "negative size " << n << std::endl;
  return s;
}
)";

class extension_calls : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kernelrl-extcalls-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { (void)common::remove_tree(dir_); }

  // Builds `source` into a shared library as torch links an extension (g++ -shared -fPIC), with
  // the C++ runtime linked statically when `static_runtime`. The build.ninja beside it names g++,
  // as torch's does.
  fs::path build(const std::string& name, const std::string& source, bool static_runtime) {
    const fs::path folder = dir_ / name;
    fs::create_directories(folder);
    EXPECT_TRUE(common::write_file_atomic(folder / "main.cpp", source));
    EXPECT_TRUE(common::write_file_atomic(folder / "build.ninja", "cxx = g++\n"));
    std::vector<std::string> argv{"g++", "-O2", "-fPIC", "-shared", (folder / "main.cpp").string(), "-o",
                                  (folder / (name + ".so")).string()};
    if (static_runtime) argv.push_back("-static-libstdc++");
    auto run = common::run_process(argv);
    EXPECT_TRUE(run && run->ok()) << (run ? run->output : run.error().message);
    return folder / (name + ".so");
  }

  // The import check alone, then the attribution; returns the attribution's verdict.
  std::optional<std::string> verdict(const fs::path& library) {
    auto own = candidate_forbidden_reference(library);
    EXPECT_TRUE(own) << own.error().message;
    return own ? *own : std::optional<std::string>("error");
  }

  bool imports_forbidden(const fs::path& library) {
    auto imports = imported_symbols(library);
    EXPECT_TRUE(imports) << imports.error().message;
    return imports && forbidden_extension_import(*imports).has_value();
  }

  fs::path dir_;
};

TEST_F(extension_calls, TheStaticRuntimesOwnSystemCallsAreNotTheCandidates) {
  const fs::path lib = build("honest_static", kHonest, true);
  ASSERT_TRUE(imports_forbidden(lib)) << "a statically linked libstdc++ imports syscall/write itself; if this g++ "
                                         "does not, this test proves nothing";
  EXPECT_EQ(verdict(lib), std::nullopt);
  auto runtime = static_runtime_definitions("g++");
  ASSERT_TRUE(runtime) << runtime.error().message;
  EXPECT_FALSE((*runtime)->archives.empty());
  auto functions = function_references(lib, **runtime);
  ASSERT_TRUE(functions) << functions.error().message;
  bool guard_is_runtime = false, forward_is_candidates = false;
  for (const auto& f : *functions) {
    if (f.name == "__cxa_guard_acquire") guard_is_runtime = f.runtime && f.refers_to.count("syscall");
    if (f.name == "forward") forward_is_candidates = !f.runtime;
  }
  EXPECT_TRUE(guard_is_runtime) << "__cxa_guard_acquire (static libstdc++) calls syscall and is the runtime's";
  EXPECT_TRUE(forward_is_candidates);
}

TEST_F(extension_calls, TheSameExtensionWithASharedRuntimePasses) {
  const fs::path lib = build("honest_shared", kHonest, false);
  EXPECT_FALSE(imports_forbidden(lib));
  EXPECT_EQ(verdict(lib), std::nullopt);
}

TEST_F(extension_calls, ACandidatesOwnSyscallIsRefusedBesideTheRuntimes) {
  const std::string source = std::string(kHonest) + R"(
#include <unistd.h>
#include <sys/syscall.h>
extern "C" long leak(long fd) { return syscall(SYS_write, fd, "x", 1); }
)";
  for (bool static_runtime : {true, false}) {
    const fs::path lib = build(static_runtime ? "own_syscall_static" : "own_syscall_shared", source, static_runtime);
    auto v = verdict(lib);
    ASSERT_TRUE(v.has_value()) << "static runtime " << static_runtime;
    EXPECT_NE(v->find("syscall"), std::string::npos) << *v;
    EXPECT_NE(v->find("called from leak"), std::string::npos) << *v;
  }
}

TEST_F(extension_calls, FileStreamsFromTheStaticRuntimeAreRefusedWhenTheCandidateUsesThem) {
  // Statically linked, std::ofstream's members are the runtime's code inside the extension, not
  // imports; the candidate's call to them is what is refused.
  const std::string source = std::string(kHonest) + R"(
#include <fstream>
extern "C" void dump(const float* x) { std::ofstream out("/tmp/leak.txt"); out << x[0]; }
)";
  const fs::path lib = build("ofstream_static", source, true);
  auto v = verdict(lib);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("called from dump"), std::string::npos) << *v;
}

TEST_F(extension_calls, AnImportsAddressInATableIsRefused) {
  const std::string source = std::string(kHonest) + R"(
#include <unistd.h>
extern "C" { typedef long (*writer)(int, const void*, unsigned long); }
writer kWriters[] = {reinterpret_cast<writer>(&::write)};
extern "C" void* writers() { return kWriters; }
)";
  const fs::path lib = build("table_static", source, true);
  auto v = verdict(lib);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->find("write"), std::string::npos) << *v;
}

TEST_F(extension_calls, TheLinkerIsReadFromTorchsBuildFile) {
  const fs::path lib = build("linker", kHonest, false);
  EXPECT_EQ(extension_linker(lib), "g++");
  EXPECT_EQ(extension_linker(dir_ / "nowhere" / "x.so"), "c++");
  EXPECT_EQ(demangled("_ZNSt13random_device7_M_finiEv"), "std::random_device::_M_fini()");
  EXPECT_EQ(demangled("forward"), "forward");
}

}  // namespace
}  // namespace kernelrl::compile
