// trim_diagnostics and first_error on canned outputs of nvcc 13, g++ 12, ptxas and ld.
#include <gtest/gtest.h>

#include "compile/compiler.hpp"
#include "compile/diagnostics.hpp"

namespace kernelrl::compile {
namespace {

const std::string kScratch = "/tmp/cache/tmp/build-Ab12Cd/candidate.cu";

const std::string kNvccOutput =
    "/tmp/cache/tmp/build-Ab12Cd/candidate.cu(2): error: identifier \"undefined_thing\" is undefined\n"
    "  __attribute__((global)) void add(float* o) { o[threadIdx.x] = undefined_thing; }\n"
    "                                                                ^\n"
    "\n"
    "/tmp/cache/tmp/build-Ab12Cd/candidate.cu(6): error: expected a \";\"\n"
    "    return foo(1);\n"
    "    ^\n"
    "\n"
    "/tmp/cache/tmp/build-Ab12Cd/candidate.cu(7): warning #940-D: missing return statement at end of non-void function \"kernelrl_forward\"\n"
    "  }\n"
    "  ^\n"
    "\n"
    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
    "\n"
    "2 errors detected in the compilation of \"/tmp/cache/tmp/build-Ab12Cd/candidate.cu\".\n";

const std::string kGxxOutput =
    "candidate.cpp: In function 'void add(float*)':\n"
    "candidate.cpp:2:25: error: 'threadIdx' was not declared in this scope\n"
    "    2 |  void add(float* o) { o[threadIdx.x] = undefined_thing; }\n"
    "      |                         ^~~~~~~~~\n"
    "candidate.cpp:2:40: error: 'undefined_thing' was not declared in this scope\n"
    "    2 |  void add(float* o) { o[threadIdx.x] = undefined_thing; }\n"
    "      |                                        ^~~~~~~~~~~~~~~\n"
    "candidate.cpp: In function 'int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*)':\n"
    "candidate.cpp:5:15: error: expected ';' before 'return'\n"
    "    5 |   add(nullptr)\n"
    "      |               ^\n"
    "      |               ;\n"
    "    6 |   return foo(1);\n"
    "      |   ~~~~~~\n"
    "candidate.cpp:7:1: warning: no return statement in function returning non-void [-Wreturn-type]\n"
    "    7 | }\n"
    "      | ^\n";

TEST(compile_trim_diagnostics, NvccKeepsErrorsWithContextAndDropsWarnings) {
  std::string out = trim_diagnostics(kNvccOutput, kScratch, "candidate.cu");
  EXPECT_EQ(out,
            "candidate.cu(2): error: identifier \"undefined_thing\" is undefined\n"
            "  __attribute__((global)) void add(float* o) { o[threadIdx.x] = undefined_thing; }\n"
            "                                                                ^\n"
            "candidate.cu(6): error: expected a \";\"\n"
            "    return foo(1);\n"
            "    ^");
  EXPECT_EQ(detail::first_error(kNvccOutput, kScratch, "candidate.cu"),
            "candidate.cu:2: error: identifier \"undefined_thing\" is undefined");
}

TEST(compile_trim_diagnostics, GxxKeepsErrorsWithSourceAndCaret) {
  std::string out = trim_diagnostics(kGxxOutput, "candidate.cpp", "attempt2.cpp");
  EXPECT_NE(out.find("attempt2.cpp:2:25: error: 'threadIdx' was not declared in this scope\n"
                     "    2 |  void add(float* o) { o[threadIdx.x] = undefined_thing; }\n"
                     "      |                         ^~~~~~~~~\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("attempt2.cpp:5:15: error: expected ';' before 'return'"), std::string::npos) << out;
  EXPECT_NE(out.find("    6 |   return foo(1);"), std::string::npos) << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  EXPECT_EQ(out.find("In function"), std::string::npos) << out;
  EXPECT_EQ(out.find("candidate.cpp"), std::string::npos) << out;
  EXPECT_EQ(detail::first_error(kGxxOutput, "candidate.cpp", "attempt2.cpp"),
            "attempt2.cpp:2: error: 'threadIdx' was not declared in this scope");
}

TEST(compile_trim_diagnostics, FatalErrorsCount) {
  std::string gcc_fatal =
      "candidate.cu:2:10: fatal error: nothere.h: No such file or directory\n"
      "    2 | #include <nothere.h>\n"
      "      |          ^~~~~~~~~~~\n"
      "compilation terminated.\n";
  EXPECT_EQ(trim_diagnostics(gcc_fatal, "", "candidate.cu"),
            "candidate.cu:2:10: fatal error: nothere.h: No such file or directory\n"
            "    2 | #include <nothere.h>\n"
            "      |          ^~~~~~~~~~~");
  std::string nvcc_catastrophic =
      "x.cu(3): catastrophic error: cannot open source file \"nothere.h\"\n"
      "  #include <nothere.h>\n"
      "                      ^\n\n"
      "1 catastrophic error detected in the compilation of \"x.cu\".\nCompilation terminated.\n";
  EXPECT_EQ(detail::first_error(nvcc_catastrophic, "x.cu", "candidate.cu"),
            "candidate.cu:3: error: cannot open source file \"nothere.h\"");
}

TEST(compile_trim_diagnostics, ToolAndLinkerErrors) {
  std::string ptxas = "ptxas error   : Entry function '_Z1kPf' uses too much shared data (0x61a80 bytes, 0xc000 max)\n";
  EXPECT_EQ(trim_diagnostics(ptxas, "", "candidate.cu"),
            "ptxas error   : Entry function '_Z1kPf' uses too much shared data (0x61a80 bytes, 0xc000 max)");
  EXPECT_EQ(detail::first_error(ptxas, "", "candidate.cu"),
            "ptxas: error: Entry function '_Z1kPf' uses too much shared data (0x61a80 bytes, 0xc000 max)");

  std::string ld =
      "/usr/bin/ld: tmpxft_00001fdf_00000000-11_candidate.o: in function `kernelrl_forward':\n"
      "tmpxft_00001fdf_00000000-6_candidate.cudafe1.cpp:(.text+0x52): undefined reference to `g(int)'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(detail::first_error(ld, "", "candidate.cu"), "candidate.cu: link error: undefined reference to `g(int)'");
  std::string out = trim_diagnostics(ld, "", "candidate.cu");
  EXPECT_NE(out.find("undefined reference to `g(int)'"), std::string::npos) << out;
  EXPECT_EQ(out.find("in function"), std::string::npos) << out;
}

TEST(compile_trim_diagnostics, CapsErrorCountAndSaysHowManyMore) {
  std::string many;
  for (int i = 1; i <= 8; ++i) {
    many += "k.cu(" + std::to_string(i) + "): error: bad thing " + std::to_string(i) + "\n  code\n  ^\n\n";
  }
  std::string out = trim_diagnostics(many, "", "k.cu", 5);
  EXPECT_NE(out.find("k.cu(5): error: bad thing 5"), std::string::npos) << out;
  EXPECT_EQ(out.find("bad thing 6"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\n... (3 more errors)")) << out;
}

TEST(compile_trim_diagnostics, CapsCharactersAtLineBoundaries) {
  std::string many;
  for (int i = 1; i <= 50; ++i) {
    many += "k.cpp:" + std::to_string(i) + ":1: error: " + std::string(60, 'x') + "\n  " + std::string(60, 'y') + "\n";
  }
  std::string out = trim_diagnostics(many, "", "k.cpp", 100, 500);
  EXPECT_LE(out.size(), 500u);
  EXPECT_NE(out.find("k.cpp:1:1: error:"), std::string::npos);
  std::size_t tail = out.rfind("\n... (");
  ASSERT_NE(tail, std::string::npos) << out;
  EXPECT_NE(out.find("more errors)", tail), std::string::npos) << out;

  std::string huge_line = "k.cpp:1:1: error: " + std::string(100000, 'T') + "\n";
  std::string one = trim_diagnostics(huge_line, "", "k.cpp", 5, 2000);
  EXPECT_LE(one.size(), 2000u);
  EXPECT_EQ(one.rfind("k.cpp:1:1: error: TTT", 0), 0u) << one.substr(0, 100);
}

TEST(compile_trim_diagnostics, KeepsWarningsWhenThereAreNoErrors) {
  std::string warn =
      "k.cu(1): warning #550-D: variable \"big\" was set but never used\n"
      "  float big[100];\n"
      "        ^\n\n"
      "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n";
  EXPECT_EQ(trim_diagnostics(warn, "", "k.cu"),
            "k.cu(1): warning #550-D: variable \"big\" was set but never used\n"
            "  float big[100];\n"
            "        ^");
}

TEST(compile_trim_diagnostics, UnrecognisedOutputKeepsTheTail) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "line " + std::to_string(i) + "\n";
  std::string out = trim_diagnostics(text, "", "k.cu", 5, 100);
  EXPECT_LE(out.size(), 100u);
  EXPECT_TRUE(out.ends_with("\nline 199")) << out;
  EXPECT_EQ(out.rfind("...\n", 0), 0u);
  EXPECT_EQ(trim_diagnostics("", "", "k.cu"), "");
}

TEST(compile_classify_line, SourceLinesThatLookLikeErrorsAreContext) {
  EXPECT_EQ(detail::classify_line("    5 |   printf(\"x.cpp:1:1: error: no\");").kind, detail::DiagKind::CONTEXT);
  EXPECT_EQ(detail::classify_line("  puts(\"a.cu(3): error: b\");").kind, detail::DiagKind::CONTEXT);
  EXPECT_EQ(detail::classify_line("3 errors detected in the compilation of \"a.cu\".").kind, detail::DiagKind::SUMMARY);
  EXPECT_EQ(detail::classify_line("a.cu(3): error: b").line, 3);
  EXPECT_EQ(detail::classify_line("dir/a.cpp:12:7: note: declared here").kind, detail::DiagKind::NOTE);
}

}  // namespace
}  // namespace kernelrl::compile
