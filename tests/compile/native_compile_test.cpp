// Compiler::compile on native (.cu) candidates through the real nvcc. Building needs no GPU; the
// cases skip, saying why, where nvcc is absent.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "common/subprocess.hpp"
#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Status;

const std::string kNativeCandidate =
    "#include <kernelrl/abi.h>\n"
    "#include <cuda_runtime.h>\n"
    "\n"
    "__global__ void add_one(const float* __restrict__ x, float* __restrict__ y, int64_t n) {\n"
    "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] + 1.0f;\n"
    "}\n"
    "\n"
    "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
    "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
    "  (void)params; (void)n_params;\n"
    "  if (n_inputs != 1 || n_outputs != 1) return 1;\n"
    "  const int64_t n = kernelrl_numel(&inputs[0]);\n"
    "  add_one<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(\n"
    "      (const float*)inputs[0].data, (float*)outputs[0].data, n);\n"
    "  return cudaGetLastError() == cudaSuccess ? 0 : 2;\n"
    "}\n";

// Whether the shared library exports `symbol`: dlopen + dlsym, or `nm -D` where the library cannot
// be loaded here (its CUDA runtime missing from the loader path).
bool exports_symbol(const fs::path& so, const char* symbol, std::string& how) {
  if (void* lib = ::dlopen(so.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    bool found = ::dlsym(lib, symbol) != nullptr;
    ::dlclose(lib);
    how = "dlsym";
    return found;
  }
  how = std::string("nm -D (dlopen failed: ") + ::dlerror() + ")";
  auto nm = common::run_process({"nm", "-D", "--defined-only", so.string()});
  return nm.ok() && nm->ok() && nm->output.find(std::string(" T ") + symbol + "\n") != std::string::npos;
}

class compile_native : public testing::compile_fixture {
 protected:
  void SetUp() override {
    compile_fixture::SetUp();
    if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: native compile cases not run";
  }
  static CompileOptions native_options() {
    CompileOptions o;
    o.format = common::Format::NATIVE;
    o.cuda_arch = "90";
    o.time_limit = std::chrono::milliseconds(60000);
    return o;
  }
};

TEST_F(compile_native, BuildsASharedLibraryThatExportsTheEntryPoint) {
  Compiler c = compiler();
  CompileResult r = c.compile(kNativeCandidate, "candidate.cu", native_options());
  ASSERT_EQ(r.status, Status::OK) << r.message << "\n" << r.log_excerpt;
  EXPECT_FALSE(r.cache_hit);
  ASSERT_TRUE(fs::is_regular_file(r.artifact));
  std::string how;
  EXPECT_TRUE(exports_symbol(r.artifact, "kernelrl_forward", how)) << "checked with " << how;

  CompileResult hit = c.compile(kNativeCandidate, "candidate.cu", native_options());
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_LT(hit.t_compile_ms, 10.0);
  std::cout << "[ native ] nvcc " << toolchain_.nvcc_version << ": cold " << r.t_compile_ms << " ms, hit "
            << hit.t_compile_ms << " ms (export checked with " << how << ")\n";

  CompileOptions other_arch = native_options();
  other_arch.cuda_arch = "80";
  EXPECT_NE(c.compile(kNativeCandidate, "candidate.cu", other_arch).key, r.key) << "the arch is part of the key";
}

TEST_F(compile_native, CompileErrorNamesTheLine) {
  std::string source = kNativeCandidate;
  source.replace(source.find("x[i] + 1.0f"), 11, "x[i] + missing_value");  // line 6
  CompileResult r = compiler().compile(source, "attempt.cu", native_options());
  ASSERT_EQ(r.status, Status::COMPILE_ERROR) << r.message;
  EXPECT_EQ(r.message, "attempt.cu:6: error: identifier \"missing_value\" is undefined");
  EXPECT_NE(r.log_excerpt.find("attempt.cu(6): error"), std::string::npos) << r.log_excerpt;
  EXPECT_EQ(r.log_excerpt.find(cache_dir_.string()), std::string::npos) << r.log_excerpt;
}

TEST_F(compile_native, InvalidArchIsRefusedBeforeNvccRuns) {
  CompileOptions o = native_options();
  o.cuda_arch = "90 -Xcompiler -evil";
  CompileResult r = compiler().compile(kNativeCandidate, "candidate.cu", o);
  EXPECT_EQ(r.status, Status::COMPILE_ERROR);
  EXPECT_NE(r.message.find("invalid cuda_arch"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace kernelrl::compile
