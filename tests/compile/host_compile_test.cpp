// Compiler::compile on host (.cpp) candidates: builds, the cache (hits, keys, corruption, races),
// compile errors, timeouts. Runs anywhere a C++ compiler does.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Status;
using testing::host_candidate;

class compile_host : public testing::compile_fixture {};

// Instantiates ~150^3 distinct class templates (depth 450, under g++'s limit of 900): minutes of
// work for the compiler, a few lines of source.
const std::string kCompileBomb =
    "#include <kernelrl/abi.h>\n"
    "template <int A, int B, int C> struct G {\n"
    "  static constexpr unsigned long v = G<A - 1, B, C>::v + G<A, B - 1, C>::v + G<A, B, C - 1>::v;\n"
    "};\n"
    "template <int B, int C> struct G<0, B, C> { static constexpr unsigned long v = 1; };\n"
    "template <int A, int C> struct G<A, 0, C> { static constexpr unsigned long v = 1; };\n"
    "template <int A, int B> struct G<A, B, 0> { static constexpr unsigned long v = 1; };\n"
    "extern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*) {\n"
    "  return static_cast<int>(G<150, 150, 150>::v & 1);\n"
    "}\n";

std::size_t n_entries_under(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir, ec), fs::directory_iterator()));
}

TEST_F(compile_host, HostCompileThenCacheHit) {
  Compiler c = compiler();
  CompileResult first = c.compile(host_candidate(1), "candidate.cpp", host_options());
  ASSERT_EQ(first.status, Status::OK) << first.message << "\n" << first.log_excerpt;
  EXPECT_FALSE(first.cache_hit);
  ASSERT_EQ(first.key.size(), 32u);
  EXPECT_EQ(first.artifact, cache_dir_ / first.key.substr(0, 2) / first.key / "candidate.so");
  EXPECT_TRUE(fs::is_regular_file(first.artifact));
  for (const char* f : {"key.txt", "result.json", "candidate.cpp", "compile.log"}) {
    EXPECT_TRUE(fs::exists(first.artifact.parent_path() / f)) << f;
  }
  EXPECT_EQ(n_entries_under(cache_dir_ / "tmp"), 0u) << "the scratch folder was renamed away";

  void* lib = ::dlopen(first.artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  EXPECT_NE(::dlsym(lib, "kernelrl_forward"), nullptr);
  ::dlclose(lib);

  CompileResult second = c.compile(host_candidate(1), "candidate.cpp", host_options());
  EXPECT_EQ(second.status, Status::OK);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_LT(second.t_compile_ms, 10.0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.artifact, first.artifact);
  std::cout << "[ host ] cold " << first.t_compile_ms << " ms, hit " << second.t_compile_ms << " ms\n";
}

TEST_F(compile_host, CompileErrorNamesTheLineAndIsCached) {
  std::string source = host_candidate(2);
  source.insert(source.find("  std::memcpy"), "  int x = undeclared_name;\n");  // becomes line 7
  Compiler c = compiler();
  CompileResult r = c.compile(source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_EQ(r.message.rfind("candidate.cpp:7: error: ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("undeclared_name"), std::string::npos) << r.message;
  EXPECT_NE(r.log_excerpt.find("candidate.cpp:7:"), std::string::npos) << r.log_excerpt;
  EXPECT_EQ(r.log_excerpt.find(cache_dir_.string()), std::string::npos) << "scratch path leaked: " << r.log_excerpt;
  EXPECT_TRUE(r.artifact.empty());

  CompileResult again = c.compile(source, "turn2.cpp", host_options());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.status, Status::COMPILE_ERROR);
  EXPECT_EQ(again.message.rfind("turn2.cpp:7: error: ", 0), 0u) << "display name rewritten on a hit: " << again.message;
  EXPECT_TRUE(again.artifact.empty());
}

TEST_F(compile_host, UndefinedSymbolsFailAtLinkTime) {
  std::string source = "#include <kernelrl/abi.h>\nint helper_nobody_defines(int);\n" +
                       std::string("extern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, "
                                   "DLTensor*, int, void*) { return helper_nobody_defines(1); }\n");
  CompileResult r = compiler().compile(source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_NE(r.message.find("undefined reference to"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("helper_nobody_defines"), std::string::npos) << r.message;
}

TEST_F(compile_host, ExtraFlagsArePartOfTheKey) {
  Compiler c = compiler();
  CompileOptions plain = host_options();
  CompileOptions flagged = host_options();
  flagged.extra_flags = {"-DKERNELRL_TEST_FLAG=1"};
  CompileResult a = c.compile(host_candidate(3), "candidate.cpp", plain);
  CompileResult b = c.compile(host_candidate(3), "candidate.cpp", flagged);
  ASSERT_EQ(a.status, Status::OK) << a.message;
  ASSERT_EQ(b.status, Status::OK) << b.message;
  EXPECT_NE(a.key, b.key);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_NE(a.artifact, b.artifact);
}

TEST_F(compile_host, CorruptedKeyFileIsAMiss) {
  Compiler c = compiler();
  CompileResult first = c.compile(host_candidate(4), "candidate.cpp", host_options());
  ASSERT_EQ(first.status, Status::OK) << first.message;
  fs::path key_file = first.artifact.parent_path() / "key.txt";
  {
    std::ofstream(key_file, std::ios::trunc) << "not the key";
  }
  CompileResult second = c.compile(host_candidate(4), "candidate.cpp", host_options());
  EXPECT_EQ(second.status, Status::OK) << second.message;
  EXPECT_FALSE(second.cache_hit);
  EXPECT_TRUE(fs::is_regular_file(second.artifact));

  CompileResult third = c.compile(host_candidate(4), "candidate.cpp", host_options());
  EXPECT_TRUE(third.cache_hit) << "the rebuilt entry replaced the corrupt one";

  fs::remove(third.artifact);  // an entry whose artifact vanished is a miss too
  CompileResult fourth = c.compile(host_candidate(4), "candidate.cpp", host_options());
  EXPECT_FALSE(fourth.cache_hit);
  EXPECT_TRUE(fs::is_regular_file(fourth.artifact));
}

TEST_F(compile_host, UseCacheFalseRebuildsAndStores) {
  Compiler c = compiler();
  CompileOptions o = host_options();
  ASSERT_EQ(c.compile(host_candidate(5), "candidate.cpp", o).status, Status::OK);
  o.use_cache = false;
  CompileResult forced = c.compile(host_candidate(5), "candidate.cpp", o);
  EXPECT_EQ(forced.status, Status::OK) << forced.message;
  EXPECT_FALSE(forced.cache_hit);
  o.use_cache = true;
  EXPECT_TRUE(c.compile(host_candidate(5), "candidate.cpp", o).cache_hit);
}

TEST_F(compile_host, CompileBombTimesOutAndIsNotCached) {
  CompileOptions o = host_options();
  o.time_limit = std::chrono::milliseconds(1000);
  CompileResult r = compiler().compile(kCompileBomb, "candidate.cpp", o);
  EXPECT_EQ(r.status, Status::TIMEOUT) << r.message;
  EXPECT_EQ(r.message, "compile exceeded 1 s");
  EXPECT_LT(r.t_compile_ms, 5000.0);
  EXPECT_FALSE(fs::exists(cache_dir_ / r.key.substr(0, 2) / r.key)) << "a timeout must not be cached";
  EXPECT_EQ(n_entries_under(cache_dir_ / "tmp"), 0u) << "the scratch folder was removed";
}

TEST_F(compile_host, StaticRejectionsNeverRunTheCompiler) {
  std::string source = host_candidate(6);
  source.insert(0, "#include <torch/extension.h>\n");
  CompileResult r = compiler().compile(source, "candidate.cpp", host_options());
  EXPECT_EQ(r.status, Status::REJECTED);
  EXPECT_EQ(r.key.size(), 32u);
  EXPECT_LT(r.t_compile_ms, 50.0);
  EXPECT_FALSE(fs::exists(cache_dir_ / r.key.substr(0, 2)));
}

TEST_F(compile_host, ConcurrentIdenticalCompilesAgreeOnOneEntry) {
  Compiler c = compiler();
  CompileResult a, b;
  std::thread ta([&] { a = c.compile(host_candidate(7), "a.cpp", host_options()); });
  std::thread tb([&] { b = c.compile(host_candidate(7), "b.cpp", host_options()); });
  ta.join();
  tb.join();
  ASSERT_EQ(a.status, Status::OK) << a.message;
  ASSERT_EQ(b.status, Status::OK) << b.message;
  EXPECT_EQ(a.artifact, b.artifact);
  EXPECT_TRUE(fs::is_regular_file(a.artifact));
  EXPECT_EQ(n_entries_under(cache_dir_ / "tmp"), 0u) << "the loser's scratch folder was removed";
}

TEST_F(compile_host, MissingNvccIsAClearNativeError) {
  Toolchain tc = toolchain_;
  tc.nvcc.clear();
  tc.nvcc_version.clear();
  CompileOptions o;
  std::string source = "#include <kernelrl/abi.h>\nextern \"C\" int kernelrl_forward(const DLTensor*, int, "
                       "const DLTensor*, int, DLTensor*, int, void*) { return 0; }\n";
  CompileResult r = Compiler(tc, cache_dir_).compile(source, "candidate.cu", o);
  EXPECT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_NE(r.message.find("nvcc not found"), std::string::npos) << r.message;

  tc.nvcc = "/nonexistent/bin/nvcc";
  CompileResult wrong = Compiler(tc, cache_dir_).compile(source, "candidate.cu", o);
  EXPECT_EQ(wrong.status, Status::COMPILE_ERROR);
  EXPECT_NE(wrong.message.find("'/nonexistent/bin/nvcc' is not an executable file"), std::string::npos) << wrong.message;
  EXPECT_FALSE(Compiler(tc, cache_dir_).compile(source, "candidate.cu", o).cache_hit) << "not stored";
}

TEST(compile_toolchain, NvccFromTheEnvironmentWins) {
  std::optional<common::Expected<Toolchain>> tc;
  {
    testing::scoped_env nvcc("KERNELRL_NVCC", "/nonexistent/bin/nvcc");
    tc = detect_toolchain();
  }
  ASSERT_TRUE(tc->ok()) << "a missing nvcc is not an error: " << tc->error().message;
  EXPECT_EQ((*tc)->nvcc, "/nonexistent/bin/nvcc");
  EXPECT_TRUE((*tc)->nvcc_version.empty());
}

TEST(compile_toolchain, MissingCxxIsAnError) {
  std::optional<common::Expected<Toolchain>> tc;
  {
    testing::scoped_env cxx("CXX", "/nonexistent/bin/g++");
    tc = detect_toolchain();
  }
  ASSERT_FALSE(tc->ok());
  EXPECT_NE(tc->error().message.find("/nonexistent/bin/g++"), std::string::npos) << tc->error().message;
}

TEST(compile_toolchain, FindsTheCxxCompilerAndReadsVersions) {
  auto tc = detect_toolchain();
  ASSERT_TRUE(tc.ok()) << tc.error().message;
  EXPECT_FALSE(tc->cxx.empty());
  EXPECT_FALSE(tc->cxx_version.empty());
  EXPECT_TRUE(fs::exists(tc->abi_include_dir / "kernelrl" / "abi.h")) << tc->abi_include_dir;
  if (!tc->nvcc.empty()) {
    EXPECT_EQ(std::count(tc->nvcc_version.begin(), tc->nvcc_version.end(), '.'), 2) << tc->nvcc_version;
  }
}

}  // namespace
}  // namespace kernelrl::compile
