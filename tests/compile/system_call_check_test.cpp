// compile/system_call_check: a candidate library whose own machine code makes system calls is
// REJECTED before it is loaded; bytes that only look like one inside a longer instruction are not,
// and turning the check off (to test the sandbox behind it) lets the library through.
#include "compile/system_call_check.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "common/fs.hpp"
#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Status;

const fs::path kSource = KERNELRL_SOURCE_DIR;

class compile_system_calls : public testing::compile_fixture {};

TEST_F(compile_system_calls, TheSyscallInstructionIsRejectedNamingWhere) {
  auto source = common::read_file(kSource / "tests/adversarial/host/forges_the_report_by_syscall.cpp");
  ASSERT_TRUE(source) << source.error().message;
  Compiler c = compiler();
  CompileResult r = c.compile(*source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("makes a system call itself (syscall at 0x"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(" in .text)"), std::string::npos) << r.message;
  EXPECT_TRUE(r.artifact.empty());

  CompileOptions unchecked = host_options();
  unchecked.system_access_check = false;
  CompileResult through = c.compile(*source, "candidate.cpp", unchecked);
  EXPECT_EQ(through.status, Status::OK) << through.message;
  EXPECT_NE(through.key, r.key) << "the check is part of the cache key";
}

TEST_F(compile_system_calls, SyscallBytesInsideAnotherInstructionAreNotOne) {
  // movl $0x050f0f05 holds 0f 05 (the syscall opcode) in its immediate; objdump reads a mov.
  const std::string source =
      "#include <kernelrl/abi.h>\n"
      "extern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor* o, int, void*) {\n"
      "  volatile int k = 0x050f0f05; static_cast<int*>(o[0].data)[0] = k; return 0;\n}\n";
  CompileResult r = compiler().compile(source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::OK) << r.message;
  auto bytes = common::read_file(r.artifact, 1 << 26);
  ASSERT_TRUE(bytes);
  EXPECT_NE(bytes->find(std::string("\x0f\x05", 2)), std::string::npos) << "the test needs the bytes in the code";
  auto found = raw_system_call(r.artifact);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_FALSE(found->has_value()) << **found;
}

TEST(system_call_check, UnreadableFilesAreErrorsNamingThem) {
  const fs::path dir = fs::temp_directory_path() / ("kernelrl-syscall-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "text.so") << "not an ELF file at all";
  auto text = raw_system_call(dir / "text.so");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("text.so"), std::string::npos) << text.error().message;
  EXPECT_FALSE(raw_system_call(dir / "missing.so"));
  (void)common::remove_tree(dir);
}

}  // namespace
}  // namespace kernelrl::compile
