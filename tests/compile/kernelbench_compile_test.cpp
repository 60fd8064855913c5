// Compiler::compile on kernelbench (.py) candidates, with plain-Python files so no torch or GPU is
// needed: the entry layout, the build environment, Python errors with their line, and caching.
#include <gtest/gtest.h>
#include <unistd.h>

#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Status;

class compile_kernelbench : public testing::compile_fixture {};

CompileOptions kernelbench_options() {
  CompileOptions o;
  o.format = common::Format::KERNELBENCH;
  o.cuda_arch = "90";
  o.time_limit = std::chrono::milliseconds(30000);
  return o;
}

TEST_F(compile_kernelbench, KernelbenchBuildsInPlaceWithTheBuildEnvironment) {
  // The parent's value must not leak into the build: the entry's extensions/ folder is what the
  // runner will load from.
  testing::scoped_env wrong_dir("TORCH_EXTENSIONS_DIR", "/nonexistent/wrong");
  const std::string source =
      "import os\n"
      "assert os.environ['TMPDIR'].endswith('/tmp') and os.path.isdir(os.environ['TMPDIR']), os.environ['TMPDIR']\n"
      "assert os.environ['TORCH_EXTENSIONS_DIR'].endswith('/extensions'), os.environ['TORCH_EXTENSIONS_DIR']\n"
      "assert os.path.isdir(os.environ['TORCH_EXTENSIONS_DIR'])\n"
      "assert os.environ['TORCH_CUDA_ARCH_LIST'] == '9.0', os.environ['TORCH_CUDA_ARCH_LIST']\n"
      "assert os.environ['MAX_JOBS'] == '4'\n"
      "assert __name__ == 'kernelrl_prebuild', __name__\n"
      "class ModelNew:\n"
      "    pass\n"
      "if __name__ == '__main__':\n"
      "    raise SystemExit(3)\n";
  Compiler c = compiler();
  CompileOptions options = kernelbench_options();
  options.system_access_check = false;  // the candidate reads os.environ
  EXPECT_EQ(c.compile(source, "candidate.py", kernelbench_options()).status, Status::REJECTED) << "os, by default";
  CompileResult r = c.compile(source, "candidate.py", options);
  ASSERT_EQ(r.status, Status::OK) << r.message << "\n" << r.log_excerpt;
  EXPECT_EQ(r.artifact, cache_dir_ / r.key.substr(0, 2) / r.key);
  EXPECT_TRUE(fs::is_regular_file(r.artifact / "candidate.py"));
  EXPECT_TRUE(fs::is_directory(r.artifact / "extensions"));

  CompileResult hit = c.compile(source, "candidate.py", options);
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.artifact, r.artifact);
  EXPECT_LT(hit.t_compile_ms, 10.0);

  CompileOptions other_arch = options;
  other_arch.cuda_arch = "100";
  CompileResult arch = c.compile(source, "candidate.py", other_arch);
  EXPECT_NE(arch.key, r.key) << "the arch list is part of a kernelbench key";
  EXPECT_EQ(arch.status, Status::COMPILE_ERROR) << "the candidate asserts 9.0";
}

// The prebuild runs the module's code (load_inline needs compilers, so processes are allowed there):
// confined to writing below its entry, ~/.nv and single device files, with no network (tools/confine).
// Shown with the static rules that would refuse such code turned off.
TEST_F(compile_kernelbench, ThePrebuildRunsConfined) {
  const fs::path outside = cache_dir_ / "planted-by-prebuild.txt";
  CompileOptions options = kernelbench_options();
  options.system_access_check = false;
  Compiler c = compiler();
  const std::string writes = "open('" + outside.string() + "', 'w').write('x')\nclass ModelNew:\n    pass\n";
  CompileResult w = c.compile(writes, "candidate.py", options);
  EXPECT_EQ(w.status, Status::COMPILE_ERROR) << w.message;
  EXPECT_NE(w.message.find("Permission denied"), std::string::npos) << w.message << "\n" << w.log_excerpt;
  EXPECT_FALSE(fs::exists(outside));
  const std::string connects = "import socket\nsocket.socket(socket.AF_INET)\nclass ModelNew:\n    pass\n";
  CompileResult n = c.compile(connects, "candidate.py", options);
  EXPECT_EQ(n.status, Status::REJECTED) << n.message;
  EXPECT_NE(n.message.find("killed by SIGSYS (a system call the build's sandbox forbids"), std::string::npos)
      << n.message << "\n" << n.log_excerpt;
  const std::string inside = "import os\nopen(os.path.join(os.environ['TMPDIR'], 'x'), 'w').write('x')\n"
                             "class ModelNew:\n    pass\n";
  CompileResult i = c.compile(inside, "candidate.py", options);
  EXPECT_EQ(i.status, Status::OK) << i.message << "\n" << i.log_excerpt;
}

// /dev/shm is shared with every process of the machine (a later candidate's, the engine's): the
// prebuild may write /dev/null and the GPU's device files, not /dev as a folder.
TEST_F(compile_kernelbench, ThePrebuildCannotWriteSharedMemoryFiles) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "SKIPPED: no /dev/shm on this machine";
  const fs::path planted = fs::path("/dev/shm") / ("kernelrl-prebuild-test-" + std::to_string(::getpid()));
  fs::remove(planted);
  CompileOptions options = kernelbench_options();
  options.system_access_check = false;
  Compiler c = compiler();
  const std::string writes = "open('" + planted.string() + "', 'w').write('x')\nclass ModelNew:\n    pass\n";
  CompileResult w = c.compile(writes, "candidate.py", options);
  EXPECT_EQ(w.status, Status::COMPILE_ERROR) << w.message;
  EXPECT_NE(w.message.find("Permission denied"), std::string::npos) << w.message << "\n" << w.log_excerpt;
  EXPECT_FALSE(fs::exists(planted));
  fs::remove(planted);
  // /dev/null stays writable (compilers and shells send output there).
  const std::string null = "open('/dev/null', 'w').write('x')\nclass ModelNew:\n    pass\n";
  CompileResult n = c.compile(null, "candidate.py", options);
  EXPECT_EQ(n.status, Status::OK) << n.message << "\n" << n.log_excerpt;
}

TEST_F(compile_kernelbench, KernelbenchExceptionNamesTheCandidateLine) {
  const std::string source =
      "x = 1\n"
      "class ModelNew:\n"
      "    pass\n"
      "raise ValueError('boom at import')\n";
  Compiler c = compiler();
  CompileResult r = c.compile(source, "turn1.py", kernelbench_options());
  ASSERT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_EQ(r.message, "turn1.py:4: ValueError: boom at import");
  EXPECT_NE(r.log_excerpt.find("Traceback"), std::string::npos) << r.log_excerpt;
  EXPECT_EQ(r.log_excerpt.find(cache_dir_.string()), std::string::npos) << r.log_excerpt;
  EXPECT_TRUE(c.compile(source, "turn1.py", kernelbench_options()).cache_hit);
}

TEST_F(compile_kernelbench, KernelbenchWithoutTorchIsNotCached) {
  // What a Python without torch prints, raised by the candidate itself so the case runs anywhere.
  const std::string source = "class ModelNew:\n    pass\nraise ModuleNotFoundError(\"No module named 'torch'\")\n";
  Compiler c = compiler();
  CompileResult r = c.compile(source, "candidate.py", kernelbench_options());
  EXPECT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_NE(r.message.find("No module named 'torch'"), std::string::npos) << r.message;
  EXPECT_FALSE(c.compile(source, "candidate.py", kernelbench_options()).cache_hit)
      << "an environment failure must not be stored";
}

TEST(compile_kernelbench_arch, TorchArchListSpelling) {
  EXPECT_EQ(torch_cuda_arch_list("90"), "9.0");
  EXPECT_EQ(torch_cuda_arch_list("90a"), "9.0a");
  EXPECT_EQ(torch_cuda_arch_list("100"), "10.0");
  EXPECT_EQ(torch_cuda_arch_list("120f"), "12.0f");
  EXPECT_EQ(torch_cuda_arch_list("9"), "");
  EXPECT_EQ(torch_cuda_arch_list("9.0"), "");
  EXPECT_EQ(torch_cuda_arch_list("90;rm"), "");
}

}  // namespace
}  // namespace kernelrl::compile
