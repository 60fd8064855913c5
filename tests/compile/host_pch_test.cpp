// The host-compile wrapper (tools/host-cc, compile/host_pch.hpp) on synthetic cudafe++ output with
// the real gcc: where it splits, that it builds one precompiled header and reuses it, that every
// failure ends in gcc's own run of the original command, and that other calls pass through.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.hpp"
#include "common/subprocess.hpp"
#include "compile/host_pch.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::compile::host_pch {
namespace {

namespace fs = std::filesystem;

// cudafe++-shaped text: the source's first line, `n` header declarations, then the candidate.
std::string cudafe_text(const std::string& source_path, int n, const std::string& candidate) {
  std::string t = "# 1 \"" + source_path + "\"\n#pragma GCC diagnostic ignored \"-Wunused-function\"\n# 1\n";
  t += "# 12 \"/usr/include/fake_runtime.h\" 3\n";
  for (int i = 0; i < n; ++i) t += "extern int runtime_function_" + std::to_string(i) + "(int, long, const char*);\n";
  t += "# 3 \"" + source_path + "\"\n" + candidate + "\n# 1 \"x.cudafe1.stub.c\"\n#include \"x.cudafe1.stub.c\"\n";
  return t;
}

TEST(host_pch_split, EndsWhereTheSourceReturns) {
  const std::string text = cudafe_text("/a/candidate.cu", 2000, "int user() { return 1; }");
  auto at = header_prefix_length(text);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(text.substr(*at, 21), "# 3 \"/a/candidate.cu\"");
  EXPECT_GE(*at, kMinPrefixBytes);
}

TEST(host_pch_split, RefusesShortOrForeignText) {
  EXPECT_FALSE(header_prefix_length(cudafe_text("/a/candidate.cu", 10, "int u;")).has_value()) << "too short to pay";
  EXPECT_FALSE(header_prefix_length("int x;\n").has_value()) << "not cudafe++ output";
  std::string never_returns = cudafe_text("/a/candidate.cu", 2000, "int u;");
  never_returns.replace(never_returns.find("# 3 \"/a/candidate.cu\""), 21, "# 3 \"/a/other.cu\"xxxx");
  EXPECT_FALSE(header_prefix_length(never_returns).has_value());
  // A marker to a file whose name only starts like the source's is not a return to the source.
  std::string prefix_name = cudafe_text("/a/c.cu", 2000, "int u;");
  prefix_name.replace(prefix_name.find("# 3 \"/a/c.cu\""), 13, "# 3 \"/a/c.cuh\"");
  EXPECT_FALSE(header_prefix_length(prefix_name).has_value());
}

TEST(host_pch_command, RecognisesOnlyNvccsHostCompile) {
  auto hc = find_host_compile({"-std=c++17", "-c", "-x", "c++", "-I", "/inc", "-fPIC", "/t/a.cudafe1.cpp", "-o", "out.o"});
  ASSERT_TRUE(hc.has_value());
  EXPECT_EQ(hc->input_index, 7u);
  EXPECT_EQ(hc->output_index, 9u);
  EXPECT_FALSE(find_host_compile({"-E", "-x", "c++", "/t/a.cudafe1.cpp", "-o", "a.ii"})) << "preprocessing";
  EXPECT_FALSE(find_host_compile({"-c", "x.cpp", "-o", "x.o"})) << "not cudafe++ output";
  EXPECT_FALSE(find_host_compile({"-c", "a.cudafe1.cpp", "b.cudafe1.cpp", "-o", "x.o"})) << "two inputs";
  EXPECT_FALSE(find_host_compile({"-c", "-include", "a.cudafe1.cpp", "x.cpp", "-o", "x.o"})) << "an option's value";
}

TEST(host_pch_cache, EvictsTheLeastRecentlyUsedBeyondTheCap) {
  auto dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-host-pch-evict-");
  ASSERT_TRUE(dir.ok());
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 5; ++i) {  // entry 0 used longest ago
    const fs::path e = *dir / ("entry" + std::to_string(i));
    fs::create_directories(e);
    std::ofstream(e.string() + ".lock") << "";
    fs::last_write_time(e, now - std::chrono::minutes(10 - i));
  }
  fs::create_directories(*dir / "build-abc");  // in progress: never counted or removed
  fs::last_write_time(*dir / "build-abc", now - std::chrono::hours(1));
  evict_least_recent(*dir, 3);
  EXPECT_FALSE(fs::exists(*dir / "entry0"));
  EXPECT_FALSE(fs::exists(*dir / "entry0.lock"));
  EXPECT_FALSE(fs::exists(*dir / "entry1"));
  for (const char* kept : {"entry2", "entry3", "entry4", "build-abc"}) EXPECT_TRUE(fs::exists(*dir / kept)) << kept;
  evict_least_recent(*dir, 3);
  EXPECT_TRUE(fs::exists(*dir / "entry2")) << "at the cap nothing more goes";
  (void)common::remove_tree(*dir);
}

class host_pch_wrapper : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(build::host_cc_wrapper, X_OK) != 0) GTEST_SKIP() << "wrapper not built: " << build::host_cc_wrapper;
    auto dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-host-pch-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    fs::create_directories(dir_ / "work");
    // The "real compiler": gcc, logging each call's input file.
    real_ = dir_ / "logging-gcc";
    std::ofstream(real_) << "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.cpp|*.h) echo \"$a\" >> " << (dir_ / "calls.log").string()
                         << ";; esac; done\nexec gcc \"$@\"\n";
    fs::permissions(real_, fs::perms::owner_all);
    std::ofstream(dir_ / "work" / "x.cudafe1.stub.c") << "int stub_function() { return 7; }\n";
  }
  void TearDown() override {
    if (!dir_.empty()) (void)common::remove_tree(dir_);
  }
  // Runs the wrapper on `text` as nvcc would for its host compile; returns exit code and output.
  common::RunResult compile(const std::string& text, const std::string& name = "x.cudafe1.cpp") {
    const fs::path in = dir_ / "work" / name;
    std::ofstream(in) << text;
    auto run = common::run_process({build::host_cc_wrapper, "-std=c++17", "-c", "-x", "c++", "-fPIC", in.string(), "-o",
                                     (dir_ / "work" / "out.o").string()},
                                    dir_ / "work",
                                    {std::string(kRealCompilerEnv) + "=" + real_.string(),
                                     std::string(kPchDirEnv) + "=" + (dir_ / "pch").string()});
    EXPECT_TRUE(run.ok());
    return run ? *run : common::RunResult{};
  }
  std::string calls() const {
    auto log = common::read_file(dir_ / "calls.log");
    return log ? *log : "";
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_ / "pch")) {
      if (e.is_directory()) out.push_back(e.path());
    }
    return out;
  }
  fs::path dir_, real_;
};

TEST_F(host_pch_wrapper, BuildsOneHeaderAndCompilesAgainstIt) {
  auto first = compile(cudafe_text("/scratch-1/candidate.cu", 3000, "int user() { return runtime_function_1(1, 2, 0); }"));
  ASSERT_TRUE(first.ok()) << first.output;
  auto second = compile(cudafe_text("/scratch-2/candidate.cu", 3000, "int other() { return 2; }"));
  ASSERT_TRUE(second.ok()) << second.output;
  ASSERT_EQ(entries().size(), 1u) << "the same headers under another source path share one entry";
  EXPECT_TRUE(fs::is_regular_file(entries()[0] / "prefix.h.gch"));
  const std::string log = calls();
  EXPECT_NE(log.find("prefix.h\n"), std::string::npos) << "the header is built:\n" << log;
  std::size_t n_rest = 0;
  for (std::size_t p = log.find(".after_pch.cpp"); p != std::string::npos; p = log.find(".after_pch.cpp", p + 1)) ++n_rest;
  EXPECT_EQ(n_rest, 2u) << "both compiles used it:\n" << log;
  auto nm = common::run_process({"nm", (dir_ / "work" / "out.o").string()});
  ASSERT_TRUE(nm.ok());
  EXPECT_NE(nm->output.find("stub_function"), std::string::npos) << "nvcc's stub, included by the rest, is compiled";
  EXPECT_NE(nm->output.find("other"), std::string::npos);
}

TEST_F(host_pch_wrapper, AFailedCompileIsGccsOwnRunOfTheOriginal) {
  auto r = compile(cudafe_text("/s/candidate.cu", 3000, "int broken() { return undefined_thing; }"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("candidate.cu:3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("undefined_thing"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("after_pch"), std::string::npos) << "no trace of the split in what a model reads:\n" << r.output;
  EXPECT_NE(calls().find("x.cudafe1.cpp\n"), std::string::npos) << "the original command ran";
}

TEST_F(host_pch_wrapper, AHeaderPartThatCannotStandAloneIsNeverRetried) {
  // The header part ends inside an open namespace: not a header gcc can precompile.
  std::string text = cudafe_text("/s/candidate.cu", 3000, "}\nint fine() { return 1; }");
  text.insert(text.find("# 12 \"/usr/include"), "namespace open_ns {\n");
  auto r1 = compile(text);
  ASSERT_TRUE(r1.ok()) << r1.output;
  auto r2 = compile(text);
  ASSERT_TRUE(r2.ok()) << r2.output;
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_TRUE(fs::exists(entries()[0] / "failed"));
  std::size_t n_builds = 0;
  const std::string log = calls();
  for (std::size_t p = log.find("prefix.h\n"); p != std::string::npos; p = log.find("prefix.h\n", p + 1)) ++n_builds;
  EXPECT_EQ(n_builds, 1u) << log;
}

TEST_F(host_pch_wrapper, OtherCallsPassThroughAndAMissingCompilerIsNamed) {
  std::ofstream(dir_ / "work" / "plain.cpp") << "int plain() { return 3; }\n";
  auto r = common::run_process({build::host_cc_wrapper, "-c", (dir_ / "work" / "plain.cpp").string(), "-o",
                                (dir_ / "work" / "plain.o").string()},
                               dir_ / "work", {std::string(kRealCompilerEnv) + "=" + real_.string()});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok()) << r->output;
  EXPECT_TRUE(fs::exists(dir_ / "work" / "plain.o"));
  auto unset = common::run_process({"env", "-u", kRealCompilerEnv, build::host_cc_wrapper, "--version"});
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(unset->exit_code, 2);
  EXPECT_NE(unset->output.find(kRealCompilerEnv), std::string::npos) << unset->output;
}

}  // namespace
}  // namespace kernelrl::compile::host_pch
