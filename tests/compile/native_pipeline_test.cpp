// The engine's native compile pipeline through the real nvcc: nvcc's front ends side by side
// (compile/nvcc_steps.hpp) and the host compile against a cached precompiled header
// (compile/host_pch.hpp) build the same library nvcc builds, reuse one header for many candidates,
// and report compile errors as nvcc does. Skips, saying so, without nvcc or the wrapper.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/subprocess.hpp"
#include "compile/host_pch.hpp"
#include "compile/nvcc_steps.hpp"
#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

namespace fs = std::filesystem;
using common::Status;

std::string native_candidate(int salt) {
  return "#include <kernelrl/abi.h>\n"
         "#include <cuda_runtime.h>\n"
         "namespace {\n"  // an anonymous namespace: named from the module id on both sides
         "__global__ void add_k(const float* x, float* y, int64_t n, float k) {\n"
         "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = x[i] + k;\n"
         "}\n"
         "}  // namespace\n"
         "template <int B> __global__ void scale(float* y, int64_t n) {\n"
         "  int64_t i = (int64_t)blockIdx.x * B + threadIdx.x;\n"
         "  if (i < n) y[i] *= 1.0f;\n"
         "}\n"
         "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params,\n"
         "                                int n_params, DLTensor* outputs, int n_outputs, void* stream) {\n"
         "  (void)params; (void)n_params; (void)n_inputs; (void)n_outputs;\n"
         "  const int64_t n = kernelrl_numel(&inputs[0]);\n"
         "  add_k<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(\n"
         "      (const float*)inputs[0].data, (float*)outputs[0].data, n, " + std::to_string(salt) + ".0f);\n"
         "  scale<256><<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>((float*)outputs[0].data, n);\n"
         "  return cudaGetLastError() == cudaSuccess ? 0 : 2;\n"
         "}\n";
}

// Defined symbols of a library, without addresses, sorted (nm -D), with the module id's name
// replaced: the one thing that differs from nvcc's own build.
std::string defined_symbols(const fs::path& so) {
  auto nm = common::run_process({"nm", "-D", "--defined-only", "--format=just-symbols", so.string()});
  return nm && nm->ok() ? nm->output : "nm failed";
}

class native_pipeline : public testing::compile_fixture {
 protected:
  void SetUp() override {
    compile_fixture::SetUp();
    if (toolchain_.nvcc.empty()) GTEST_SKIP() << "nvcc not found: native pipeline cases not run";
    if (toolchain_.host_cc_wrapper.empty()) GTEST_SKIP() << "the host-cc wrapper is not built: cases not run";
  }
  static CompileOptions options(bool fast) {
    CompileOptions o;
    o.format = common::Format::NATIVE;
    o.cuda_arch = "90";
    o.host_pch = fast;
    o.parallel_nvcc = fast;
    return o;
  }
  // Entries (folders) of the precompiled-header cache.
  std::vector<fs::path> pch_entries() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache_dir_ / "host-pch", ec)) {
      if (e.is_directory()) out.push_back(e.path());
    }
    return out;
  }
};

TEST_F(native_pipeline, BuildsWhatNvccBuildsAndSharesOnePrecompiledHeader) {
  Compiler c = compiler();
  CompileResult plain = c.compile(native_candidate(1), "candidate.cu", options(false));
  ASSERT_EQ(plain.status, Status::OK) << plain.log_excerpt;
  EXPECT_TRUE(pch_entries().empty()) << "nvcc as is must not touch the header cache";

  std::vector<double> ms;
  for (int salt = 2; salt <= 4; ++salt) {
    CompileResult fast = c.compile(native_candidate(salt), "candidate.cu", options(true));
    ASSERT_EQ(fast.status, Status::OK) << fast.message << "\n" << fast.log_excerpt;
    EXPECT_EQ(defined_symbols(fast.artifact), defined_symbols(plain.artifact));
    ms.push_back(fast.t_compile_ms);
    for (const auto& f : fs::directory_iterator(fast.artifact.parent_path())) {
      EXPECT_EQ(f.path().filename().string().rfind("tmpxft", 0), std::string::npos) << "temporary left: " << f.path();
    }
  }
  const auto entries = pch_entries();
  ASSERT_EQ(entries.size(), 1u) << "three candidates with the same headers share one precompiled header";
  EXPECT_TRUE(fs::is_regular_file(entries[0] / "prefix.h.gch"));
  std::cout << "[ pipeline ] nvcc as is " << plain.t_compile_ms << " ms; engine " << ms[0] << " (builds the header), "
            << ms[1] << ", " << ms[2] << " ms\n";
}

TEST_F(native_pipeline, ReportsErrorsOnceAndAsNvccDoes) {
  const std::string broken = native_candidate(5) + "int oops() { return undefined_name; }\n";
  const std::string device_only = native_candidate(6) +  // a host function called from device code
                                  "int host_only() { return 1; }\n__global__ void bad(int* y) { y[0] = host_only(); }\n";
  Compiler c = compiler();
  for (const std::string& source : {broken, device_only}) {
    CompileResult plain = c.compile(source, "candidate.cu", options(false));
    CompileResult fast = c.compile(source + "// fast\n", "candidate.cu", options(true));
    ASSERT_EQ(plain.status, Status::COMPILE_ERROR);
    ASSERT_EQ(fast.status, Status::COMPILE_ERROR);
    EXPECT_EQ(fast.message, plain.message) << fast.log_excerpt;
    const std::string what = plain.message.substr(plain.message.find("error:"));
    auto count = [&](const std::string& log) {
      std::size_t n = 0;
      for (std::size_t p = log.find(what); p != std::string::npos; p = log.find(what, p + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count(plain.log_excerpt), 1u) << plain.log_excerpt;
    EXPECT_EQ(count(fast.log_excerpt), 1u) << "shown once, as nvcc shows it:\n" << fast.log_excerpt;
  }
  for (const auto& f : fs::recursive_directory_iterator(cache_dir_)) {  // failed builds are cached: no temporaries in them
    EXPECT_EQ(f.path().filename().string().rfind("tmpxft", 0), std::string::npos) << f.path();
  }
}

}  // namespace
}  // namespace kernelrl::compile
