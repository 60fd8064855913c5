// Read confinement of the compilers (compile/read_roots.hpp, tools/confine --read): the roots are
// computed from where the tools are, and a candidate whose assembler directive the static scan does
// not see (spelt through string pasting) cannot read a host file into its build or its error text,
// in any format; honest candidates still build.
#include <gtest/gtest.h>
#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "common/fs.hpp"
#include "common/subprocess.hpp"
#include "compile/read_roots.hpp"
#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Format;
using common::Status;

bool has(const std::vector<std::string>& roots, const std::string& path) {
  return std::find(roots.begin(), roots.end(), path) != roots.end();
}

// Whether `path` is readable under `roots` (below a folder of the list, or one of its files).
bool covered(const std::vector<std::string>& roots, const std::string& path) {
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
    return path == r || (path.rfind(r + "/", 0) == 0) || r == "/";
  });
}

bool landlock_available() {
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class read_roots_tree : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-read-roots-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    base_ = fs::canonical(*dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  fs::path tool(const fs::path& p) {
    write_text(p, "#!/bin/sh\n");
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  fs::path base_;
};

TEST_F(read_roots_tree, AToolGivesItsInstallPrefixThroughLinks) {
  // cuda -> cuda-13.0, as /usr/local/cuda on the GPU machine: the rule names the real folder.
  const fs::path nvcc = tool(base_ / "cuda-13.0" / "bin" / "nvcc");
  fs::create_directory_symlink(base_ / "cuda-13.0", base_ / "cuda");
  ReadRootsInputs in;
  in.tools = {(base_ / "cuda" / "bin" / "nvcc").string()};
  in.folders = {(base_ / "cuda-13.0" / "include").string()};  // below the prefix: dropped as covered
  fs::create_directories(base_ / "cuda-13.0" / "include");
  const auto roots = read_roots(in);
  EXPECT_EQ(roots, std::vector<std::string>{(base_ / "cuda-13.0").string()});
  (void)nvcc;
}

TEST_F(read_roots_tree, TooBroadFoldersAreNeverRootsUnlessGivenExplicitly) {
  const fs::path home = base_ / "home" / "user";
  const fs::path ninja = tool(home / "bin" / "ninja");  // a tool in ~/bin: its prefix is the home folder
  const fs::path venv_python = tool(home / "venv" / "bin" / "python");
  ReadRootsInputs in;
  in.home = home.string();
  in.tools = {ninja.string(), venv_python.string()};
  in.folders = {"/", "/etc", "/tmp", "/proc", home.string(), (base_ / "home").string(), (base_ / "missing").string()};
  in.system = {"/etc/ld.so.cache", "/no/such/file"};
  in.extra = {"/etc/hostname"};
  const auto roots = read_roots(in);
  EXPECT_TRUE(has(roots, (home / "bin").string())) << "the tool's own folder instead of the home folder";
  EXPECT_TRUE(has(roots, (home / "venv").string())) << "a venv in the home folder is its own prefix";
  for (const std::string& broad : std::vector<std::string>{"/", "/etc", "/tmp", "/proc", home.string(), (base_ / "home").string()}) {
    EXPECT_FALSE(has(roots, broad)) << broad;
  }
  EXPECT_FALSE(has(roots, (base_ / "missing").string()));
  EXPECT_FALSE(has(roots, "/no/such/file"));
  if (fs::exists("/etc/ld.so.cache")) EXPECT_TRUE(has(roots, fs::canonical("/etc/ld.so.cache").string()));
  if (fs::exists("/etc/hostname")) EXPECT_TRUE(has(roots, fs::canonical("/etc/hostname").string()));
}

TEST(compile_read_roots, SplitPathList) {
  EXPECT_EQ(split_path_list("/a::/b:"), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(split_path_list("").empty());
}

TEST(compile_read_roots, TheDetectedToolchainCoversItsToolsButNotTheHostsFiles) {
  auto extra_dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-extra-root-");
  ASSERT_TRUE(extra_dir.ok()) << extra_dir.error().message;
  const std::string extra_root = fs::canonical(*extra_dir).string();
  testing::scoped_env extra("KERNELRL_COMPILE_READ_ROOTS", ("/nonexistent-root:" + extra_root).c_str());
  auto tc = detect_toolchain();
  fs::remove_all(*extra_dir);
  ASSERT_TRUE(tc.ok()) << tc.error().message;
  for (const auto* roots : {&tc->read_roots, &tc->python_read_roots}) {
    std::string listed;
    for (const auto& r : *roots) listed += r + " ";
    SCOPED_TRACE(listed);
    EXPECT_TRUE(covered(*roots, fs::canonical(tc->cxx).string()));
    if (!tc->nvcc.empty()) {
      EXPECT_TRUE(covered(*roots, fs::canonical(tc->nvcc).string()));
      EXPECT_TRUE(covered(*roots, (fs::canonical(tc->nvcc).parent_path().parent_path() / "include").string()));
    }
    EXPECT_TRUE(covered(*roots, (tc->abi_include_dir / "kernelrl" / "abi.h").string()));
    EXPECT_FALSE(covered(*roots, (fs::path(KERNELRL_SOURCE_DIR) / "CMakeLists.txt").string())) << "the repository";
    EXPECT_FALSE(covered(*roots, "/etc/passwd"));
    EXPECT_FALSE(covered(*roots, "/etc/hostname"));
    EXPECT_FALSE(covered(*roots, "/tmp/x"));
    EXPECT_FALSE(covered(*roots, "/proc/1/environ"));
    if (const char* home = std::getenv("HOME")) EXPECT_FALSE(covered(*roots, std::string(home) + "/.ssh/id_rsa"));
    EXPECT_TRUE(has(*roots, extra_root)) << "$KERNELRL_COMPILE_READ_ROOTS";
    EXPECT_FALSE(has(*roots, "/nonexistent-root"));
  }
  EXPECT_TRUE(covered(tc->python_read_roots, fs::canonical(tc->python).string()));
  // Where torch is, as the interpreter says (pip's site-packages, a venv, ...).
  auto torch = common::run_process({tc->python, "-c", "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s else '')"});
  if (torch && torch->ok() && torch->output.size() > 1) {
    const std::string init = torch->output.substr(0, torch->output.find('\n'));
    EXPECT_TRUE(covered(tc->python_read_roots, fs::canonical(init).string())) << init;
  }
}

// A host file with a marker only its content holds, in a folder of its own (not the cache, not a root).
class compile_read_confinement : public testing::compile_fixture {
 protected:
  void SetUp() override {
    compile_fixture::SetUp();
    if (HasFatalFailure()) return;
    if (!landlock_available()) GTEST_SKIP() << "SKIPPED: no Landlock in this kernel: compiles run read-unconfined";
    auto dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-host-secret-");
    ASSERT_TRUE(dir.ok()) << dir.error().message;
    secret_dir_ = *dir;
    marker_ = "kernelrl_secret_marker_" + std::to_string(std::random_device{}());
    secret_ = secret_dir_ / "secret.s";
    write_text(secret_, marker_ + "\n");
  }
  void TearDown() override {
    std::error_code ec;
    if (!secret_dir_.empty()) fs::remove_all(secret_dir_, ec);
    compile_fixture::TearDown();
  }
  // The file-scope asm statement naming `directive` through string pasting (".inc" "bin").
  static std::string pasted_directive(const std::string& directive, const fs::path& file) {
    return "asm(\".section .rodata\\n\" \"" + directive.substr(0, 4) + "\" \"" + directive.substr(4) + " \\\"" +
           file.string() + "\\\"\\n\" \".text\\n\");\n";
  }
  // The candidate fails to build and neither its message nor its log holds the file's content.
  void expect_unread(const std::string& source, Format format, const std::string& name, const std::string& content,
                     const std::string& path_in_error) {
    CompileOptions options = host_options();
    options.format = format;
    options.time_limit = std::chrono::milliseconds(120000);
    ASSERT_EQ(check_source(source, format, name).status, Status::OK) << "the static scan does not see it";
    CompileResult r = compiler().compile(source, name, options);
    EXPECT_EQ(r.status, Status::COMPILE_ERROR) << r.message << "\n" << r.log_excerpt;
    EXPECT_EQ(r.message.find(content), std::string::npos) << r.message;
    EXPECT_EQ(r.log_excerpt.find(content), std::string::npos) << r.log_excerpt;
    // The assembler names the file it could not open (".include": "Permission denied"; ".incbin":
    // "file not found"), which the candidate wrote itself.
    EXPECT_NE(r.log_excerpt.find(path_in_error), std::string::npos) << r.log_excerpt;
  }
  fs::path secret_dir_, secret_;
  std::string marker_;
};

TEST_F(compile_read_confinement, HostCandidateCannotAssembleAHostFile) {
  for (const char* directive : {".incbin", ".include"}) {
    SCOPED_TRACE(directive);
    expect_unread(pasted_directive(directive, secret_) + testing::host_candidate(), Format::HOST, "candidate.cpp", marker_,
                  secret_.string());
  }
  std::ifstream hostname_file("/etc/hostname");
  std::string hostname;
  if (std::getline(hostname_file, hostname) && hostname.size() >= 4) {
    expect_unread(pasted_directive(".include", "/etc/hostname") + testing::host_candidate(1), Format::HOST,
                  "candidate.cpp", hostname, "/etc/hostname");
  }
}

TEST_F(compile_read_confinement, TheSameDirectiveUnconfinedReadsTheFile) {
  // What the confinement stops: the plain compiler reads the file and prints its content.
  const fs::path src = secret_dir_ / "candidate.cpp";
  write_text(src, pasted_directive(".include", secret_) + testing::host_candidate());
  auto run = common::run_process({toolchain_.cxx, "-c", "-I" + toolchain_.abi_include_dir.string(), "-o",
                                  (secret_dir_ / "candidate.o").string(), src.string()});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_NE(run->output.find(marker_), std::string::npos) << run->output;
}

TEST_F(compile_read_confinement, NativeCandidateCannotAssembleAHostFile) {
  if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: native case not run";
  const std::string head = "#include <kernelrl/abi.h>\n";
  const std::string entry =
      "extern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*) {\n"
      "  return 0;\n}\n";
  for (const char* directive : {".incbin", ".include"}) {
    SCOPED_TRACE(directive);
    expect_unread(head + pasted_directive(directive, secret_) + entry, Format::NATIVE, "candidate.cu", marker_,
                  secret_.string());
  }
}

TEST_F(compile_read_confinement, ExamplesStillBuild) {
  const fs::path examples = fs::path(KERNELRL_SOURCE_DIR) / "examples" / "vector_add";
  auto host = common::read_file(examples / "host.cpp");
  ASSERT_TRUE(host) << host.error().message;
  CompileResult h = compiler().compile(*host, "host.cpp", host_options());
  EXPECT_EQ(h.status, Status::OK) << h.message << "\n" << h.log_excerpt;
  if (!toolchain_.nvcc.empty()) {
    auto native = common::read_file(examples / "native.cu");
    ASSERT_TRUE(native) << native.error().message;
    CompileOptions options;
    options.format = Format::NATIVE;
    options.time_limit = std::chrono::milliseconds(120000);
    for (const bool fast : {true, false}) {  // nvcc's steps side by side with the host-pch wrapper, and nvcc as is
      options.host_pch = options.parallel_nvcc = fast;
      options.use_cache = false;
      CompileResult n = compiler().compile(*native, "native.cu", options);
      EXPECT_EQ(n.status, Status::OK) << fast << ": " << n.message << "\n" << n.log_excerpt;
      EXPECT_TRUE(n.pipeline_note.empty()) << n.pipeline_note;
    }
  }
}

// The kernelbench prebuild (torch, ninja, the C++ compiler) builds the CPU example read-confined,
// and the same example with a pasted `.include` of the host file in its C++ source fails without
// the file's content in its message.
TEST_F(compile_read_confinement, KernelbenchPrebuildBuildsTheExampleButReadsNoHostFile) {
  auto probe = common::run_process({toolchain_.python, "-c", "import torch"});
  if (!probe || !probe->ok()) GTEST_SKIP() << "SKIPPED: no torch for " << toolchain_.python;
  auto example = common::read_file(fs::path(KERNELRL_SOURCE_DIR) / "examples" / "vector_add" / "kernelbench_cpu.py");
  ASSERT_TRUE(example) << example.error().message;
  CompileOptions options;
  options.format = Format::KERNELBENCH;
  options.time_limit = std::chrono::milliseconds(300000);
  CompileResult ok = compiler().compile(*example, "candidate.py", options);
  ASSERT_EQ(ok.status, Status::OK) << ok.message << "\n" << ok.log_excerpt;

  std::string hostile = *example;
  const std::string include = "#include <torch/extension.h>\n";
  const std::size_t at = hostile.find(include);
  ASSERT_NE(at, std::string::npos);
  hostile.insert(at + include.size(), pasted_directive(".include", secret_));
  const std::string name = "kernelrl_example_vector_add_cpu";
  hostile.replace(hostile.find(name), name.size(), name + "_reads");  // another extension, not ok's build
  ASSERT_EQ(check_source(hostile, Format::KERNELBENCH, "candidate.py").status, Status::OK) << "the static scan does not see it";
  CompileResult r = compiler().compile(hostile, "candidate.py", options);
  EXPECT_EQ(r.status, Status::COMPILE_ERROR) << r.message << "\n" << r.log_excerpt;
  EXPECT_EQ(r.message.find(marker_), std::string::npos) << r.message;
  EXPECT_EQ(r.log_excerpt.find(marker_), std::string::npos) << r.log_excerpt;
}

}  // namespace
}  // namespace kernelrl::compile
