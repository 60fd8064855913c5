// compile/import_check: what a built library imports, and the builds it turns into REJECTED
// (run-time lookup through dl*, weak undefined symbols), host and native.
#include "compile/import_check.hpp"

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

std::string forward_calling(const std::string& declarations, const std::string& body) {
  return "#include <kernelrl/abi.h>\n" + declarations +
         "\nextern \"C\" int kernelrl_forward(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*) {\n" +
         body + "\n}\n";
}

class compile_imports : public testing::compile_fixture {};

TEST_F(compile_imports, AnOrdinaryCandidateImportsOnlyWhatItLinks) {
  CompileResult r = compiler().compile(testing::host_candidate(3), "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::OK) << r.message;
  auto imports = imported_symbols(r.artifact);
  ASSERT_TRUE(imports) << imports.error().message;
  int weak = 0;
  for (const auto& s : *imports) weak += s.weak;
  EXPECT_GE(weak, 1) << "g++'s crtstuff weak references are expected (and allowed)";
  EXPECT_FALSE(forbidden_import(*imports).has_value()) << *forbidden_import(*imports);
}

TEST_F(compile_imports, DlsymIsRejectedAndNeverCached) {
  const std::string source =
      forward_calling("#include <dlfcn.h>", "return dlsym(RTLD_DEFAULT, \"cublasSscal_v2\") != nullptr ? 1 : 0;");
  Compiler c = compiler();
  CompileResult r = c.compile(source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("dlsym"), std::string::npos) << r.message;
  EXPECT_TRUE(r.artifact.empty());
  CompileResult again = c.compile(source, "candidate.cpp", host_options());
  EXPECT_EQ(again.status, Status::REJECTED);
  EXPECT_TRUE(again.artifact.empty());
}

TEST_F(compile_imports, WeakUndefinedSymbolsAreRejected) {
  // -z defs lets a weak reference through; the loader would bind it to the evaluator's libpython.
  const std::string source = forward_calling("extern \"C\" __attribute__((weak)) int PyRun_SimpleString(const char*);",
                                             "return PyRun_SimpleString ? PyRun_SimpleString(\"pass\") : 0;");
  CompileResult r = compiler().compile(source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("PyRun_SimpleString"), std::string::npos) << r.message;
}

TEST_F(compile_imports, TheAdversarialPythonPatcherIsRejected) {
  auto source = common::read_file(kSource / "tests/adversarial/host/patches_the_reference_via_python.cpp");
  ASSERT_TRUE(source) << source.error().message;
  CompileResult r = compiler().compile(*source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::REJECTED) << r.message;
  EXPECT_NE(r.message.find("dlsym"), std::string::npos) << r.message;
}

// Builds a native candidate of the adversarial corpus for sm_90 (nvcc needs no GPU).
CompileResult build_native(Compiler compiler, const std::string& corpus_file) {
  auto source = common::read_file(kSource / "tests/adversarial/native" / corpus_file);
  if (!source) {
    ADD_FAILURE() << source.error().message;
    return {};
  }
  CompileOptions o;
  o.format = common::Format::NATIVE;
  o.cuda_arch = "90";
  o.time_limit = std::chrono::milliseconds(60000);
  return compiler.compile(*source, "candidate.cu", o);
}

TEST_F(compile_imports, NativeDlopenOfCublasIsRejected) {
  if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: the native case is not run";
  CompileResult r = build_native(compiler(), "dlopens_cublas.cu");
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("the candidate uses dl"), std::string::npos) << r.message;  // dlopen or dlsym
}

// Streams of its own are a native candidate's to use (a graph captured on a private stream, kernels
// on several streams): its process synchronises its whole context before answering a call and the
// clock stops in the evaluator's context (eval/timing.cpp), so the work is timed wherever it runs.
TEST_F(compile_imports, NativeStreamsOfItsOwnAreBuilt) {
  if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: the native case is not run";
  CompileResult r = build_native(compiler(), "computes_on_a_side_stream.cu");
  ASSERT_EQ(r.status, Status::OK) << r.message << "\n" << r.log_excerpt;
}

// CUB as models include it (<cub/cub.cuh>): CUDA 13's CUB brings NVTX ranges whose header-inline
// loader calls dlopen, which the import check refuses as run-time lookup. Candidates are built with
// NVTX off (build.hpp kNvtxOffDefines), so an honest CUB kernel passes and imports no dl* function.
TEST_F(compile_imports, NativeCandidateWithCubIsNotRefusedForNvtx) {
  if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: the native case is not run";
  const std::string source = R"(#include <kernelrl/abi.h>
#include <cub/cub.cuh>
__global__ void row_sum(const float* x, float* y, int cols) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += 256) s += x[(long)blockIdx.x * cols + c];
  s = Reduce(tmp).Sum(s);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}
extern "C" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, int n_params,
                                DLTensor* outputs, int n_outputs, void* stream) {
  (void)params; (void)n_params; (void)n_inputs; (void)n_outputs;
  const int rows = (int)inputs[0].shape[0], cols = (int)inputs[0].shape[1];
  row_sum<<<rows, 256, 0, (cudaStream_t)stream>>>((const float*)inputs[0].data, (float*)outputs[0].data, cols);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";
  CompileOptions o;
  o.format = common::Format::NATIVE;
  o.cuda_arch = "90";
  o.time_limit = std::chrono::milliseconds(120000);
  CompileResult r = compiler().compile(source, "cub_row_sum.cu", o);
  ASSERT_EQ(r.status, Status::OK) << r.message << "\n" << r.log_excerpt;
  auto imports = imported_symbols(r.artifact);
  ASSERT_TRUE(imports) << imports.error().message;
  for (const auto& s : *imports) EXPECT_NE(s.name.rfind("dl", 0), 0u) << s.name;
}

TEST(import_check, NativeCandidatesMayCreateStreamsButNotThreadsHostOnesMay) {
  for (const char* name : {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cuStreamCreate"}) {
    EXPECT_FALSE(forbidden_import({{name, false}}, true)) << name;
  }
  EXPECT_TRUE(forbidden_import({{"pthread_create", false}}, true));
  EXPECT_FALSE(forbidden_import({{"pthread_create", false}}, false));  // host: threads are a CPU technique
  EXPECT_FALSE(forbidden_import({{"cudaLaunchKernel", false}, {"cudaEventRecord", false}}, true));
  EXPECT_TRUE(forbidden_import({{"cudaGetDriverEntryPoint", false}}, false));  // run-time lookup, any format
  // std::thread starts its thread inside libstdc++: the candidate imports _M_start_thread.
  EXPECT_TRUE(forbidden_import(
      {{"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", false}}, true));
}

TEST(import_check, NoCandidateMakesSystemCallsOfItsOwn) {
  // The report channel is a descriptor in the same process: writing it forges the result.
  for (const char* name : {"write", "writev", "syscall", "dup2", "fdopen", "open", "socket", "sigaction", "mprotect",
                           "mkdir", "rename", "unlink", "ftruncate", "mkstemp",
                           "_ZNSt13basic_filebufIcSt11char_traitsIcEE4openEPKcSt13_Ios_Openmode",
                           "_ZNSt10filesystem6removeERKNS_4pathE"}) {
    auto native = forbidden_import({{name, false}}, true);
    ASSERT_TRUE(native) << name;
    EXPECT_NE(native->find(std::string("calls ") + name), std::string::npos) << *native;
    EXPECT_NE(native->find("no system calls"), std::string::npos) << *native;
    EXPECT_TRUE(forbidden_import({{name, false}}, false)) << "host: " << name;
    EXPECT_TRUE(forbidden_extension_import({{name, false}})) << "extension: " << name;
  }
  // Output through stdio (captured and capped) and the C++ runtime stay allowed.
  EXPECT_FALSE(forbidden_import({{"printf", false}, {"puts", false}, {"fwrite", false}, {"__cxa_atexit", false},
                                 {"_ZNSt8ios_base4InitC1Ev", false}, {"kill", false}},
                                true));
}

TEST_F(compile_imports, TheAdversarialReportForgerIsRejected) {
  auto source = common::read_file(kSource / "tests/adversarial/host/forges_the_report.cpp");
  ASSERT_TRUE(source) << source.error().message;
  CompileResult r = compiler().compile(*source, "candidate.cpp", host_options());
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("calls write"), std::string::npos) << r.message;
  EXPECT_TRUE(r.artifact.empty());
}

TEST_F(compile_imports, NativeReportForgerIsRejected) {
  if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: the native case is not run";
  CompileResult r = build_native(compiler(), "forges_the_report.cu");
  ASSERT_EQ(r.status, Status::REJECTED) << r.message << "\n" << r.log_excerpt;
  EXPECT_NE(r.message.find("calls write"), std::string::npos) << r.message;
}

TEST(import_check, KernelbenchExtensionsMayNotCreateStreamsOrLookUpSymbols) {
  // Built by torch against the process: unresolved Python/torch symbols and weak ones are normal.
  EXPECT_FALSE(forbidden_extension_import({{"PyObject_GetAttr", false}, {"__cxa_pure_virtual", true},
                                           {"_ZNSt6thread6detachEv", false}, {"pthread_create", false}}));
  EXPECT_TRUE(forbidden_extension_import({{"cudaStreamCreateWithFlags", false}}));
  EXPECT_TRUE(forbidden_extension_import({{"dlsym", false}}));
}

TEST(import_check, BadFilesAreErrorsNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("kernelrl-import-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "text.so") << "not an ELF file at all";
  auto text = imported_symbols(dir / "text.so");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("text.so"), std::string::npos) << text.error().message;
  // A real library cut short: its section headers (at the end) are gone.
  auto self = common::read_file("/proc/self/exe", 1ull << 30);
  ASSERT_TRUE(self);
  std::ofstream(dir / "cut.so", std::ios::binary) << self->substr(0, 4096);
  auto cut = imported_symbols(dir / "cut.so");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message.find("cut.so"), std::string::npos) << cut.error().message;
  EXPECT_FALSE(imported_symbols(dir / "missing.so"));
  (void)common::remove_tree(dir);
}

TEST(import_check, ToolchainWeakReferencesAreAllowedOthersNot) {
  EXPECT_FALSE(forbidden_import({{"__cxa_finalize", true}, {"__gmon_start__", true}, {"memcpy", false}}));
  EXPECT_TRUE(forbidden_import({{"cublasSscal_v2", true}}));
  EXPECT_TRUE(forbidden_import({{"dl_iterate_phdr", false}}));
  EXPECT_FALSE(forbidden_import({{"cublasSscal_v2", false}}));  // strong: -z defs already needs a definition
}

}  // namespace
}  // namespace kernelrl::compile
