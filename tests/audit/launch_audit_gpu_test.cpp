// The launch audit on a GPU, as the runner uses it: the candidate library's kernel names read
// first, the audit installed, then the library loaded and called inside begin_call/end_call. Its
// own kernels (launched by <<<...>>>, cudaLaunchKernelEx, the driver, in graphs) must count as own
// and nothing else; cuBLAS's as foreign, also between calls and when captured into a graph;
// anything inside the operator recorder's window as allowed. Every result is printed as the
// record's JSON, so a run shows which entry points the launches came through. Skipped, saying so,
// where there is no GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "audit/launch_audit.hpp"
#include "audit/own_kernels.hpp"

namespace kernelrl::audit {
namespace {

constexpr int kN = 1 << 16;   // floats per buffer
constexpr int kMatrix = 256;  // kMatrix * kMatrix == kN: cuBLAS's operands
static_assert(kMatrix * kMatrix == kN);

std::string cuda_text(int e) {
  const auto error = static_cast<cudaError_t>(e);
  return std::string(cudaGetErrorName(error)) + " (" + std::to_string(e) + "): " + cudaGetErrorString(error);
}

#define ASSERT_CUDA(call)                                                      \
  do {                                                                         \
    const int kernelrl_e = static_cast<int>(call);                             \
    ASSERT_EQ(kernelrl_e, 0) << #call << " failed: " << cuda_text(kernelrl_e); \
  } while (0)

#define ASSERT_CUBLAS(call)                                                                                  \
  do {                                                                                                       \
    const cublasStatus_t kernelrl_s = (call);                                                                \
    ASSERT_EQ(kernelrl_s, CUBLAS_STATUS_SUCCESS) << #call << " failed: " << cublasGetStatusName(kernelrl_s); \
  } while (0)

// The test library's host functions (audit_test_kernels.cu, audit_test_graphs.cu), each returning a
// cudaError_t.
struct TestLibrary {
  int (*scale)(float*, int, float, cudaStream_t) = nullptr;
  int (*add_one)(float*, int, cudaStream_t) = nullptr;
  int (*launch_ex)(float*, int, cudaStream_t) = nullptr;
  int (*driver_launch)(float*, int, cudaStream_t) = nullptr;
  int (*oversized_launch)(float*, int, cudaStream_t) = nullptr;
  int (*other_stream)(float*, int) = nullptr;
  int (*private_stream_graph)(float*, int, cudaStream_t) = nullptr;
  int (*given_stream_graph)(float*, int, cudaStream_t) = nullptr;
  int (*node_graph)(float*, int, cudaStream_t) = nullptr;
};

template <typename F>
bool find(void* handle, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (out == nullptr) missing += std::string(" ") + name;
  return out != nullptr;
}

// Loads `path` (never unloaded: CUDA libraries do not like it); an empty string or what went wrong.
std::string load_library(const char* path, TestLibrary& lib) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return std::string("dlopen(") + path + "): " + dlerror();
  std::string missing;
  find(handle, "audit_test_scale", lib.scale, missing);
  find(handle, "audit_test_add_one", lib.add_one, missing);
  find(handle, "audit_test_launch_ex", lib.launch_ex, missing);
  find(handle, "audit_test_driver_launch", lib.driver_launch, missing);
  find(handle, "audit_test_oversized_launch", lib.oversized_launch, missing);
  find(handle, "audit_test_other_stream", lib.other_stream, missing);
  find(handle, "audit_test_private_stream_graph", lib.private_stream_graph, missing);
  find(handle, "audit_test_given_stream_graph", lib.given_stream_graph, missing);
  find(handle, "audit_test_node_graph", lib.node_graph, missing);
  return missing.empty() ? "" : std::string(path) + " lacks" + missing;
}

// The operator recorder's answer, as the runner's predicate will give it: a flag of the thread.
thread_local bool t_inside_allowed_op = false;
struct AllowedOpScope {
  AllowedOpScope() { t_inside_allowed_op = true; }
  ~AllowedOpScope() { t_inside_allowed_op = false; }
};

void print(const char* what, const CallLaunches& r) {
  std::cout << "[launch audit] " << what << ": " << to_json(r).dump() << std::endl;
}

bool names_contain(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class LaunchAuditGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n_devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&n_devices);
    if (e != cudaSuccess || n_devices == 0) {
      GTEST_SKIP() << "no GPU (cudaGetDeviceCount: " << cuda_text(e) << ", " << n_devices << " devices)";
    }
    ASSERT_CUDA(cudaSetDevice(0));
    ASSERT_CUDA(cudaFree(nullptr));  // creates the primary context and makes it current here
    for (float** buffer : {&x_, &a_, &b_, &c_}) {
      ASSERT_CUDA(cudaMalloc(buffer, kN * sizeof(float)));
      ASSERT_CUDA(cudaMemset(*buffer, 0, kN * sizeof(float)));
    }
    ASSERT_CUDA(cudaStreamCreateWithFlags(&given_, cudaStreamNonBlocking));
    ASSERT_CUDA(cudaDeviceSynchronize());
  }

  void TearDown() override {
    if (cublas_ != nullptr) cublasDestroy(cublas_);
    cudaDeviceSynchronize();
    if (given_ != nullptr) cudaStreamDestroy(given_);
    for (float* buffer : {x_, a_, b_, c_}) {
      if (buffer != nullptr) cudaFree(buffer);
    }
  }

  // The runner's order: names from the file, the audit installed, then the library loaded.
  void install_and_load(const char* library) {
    auto names = own_kernel_names({library, AUDIT_PLAIN_LIBRARY});
    ASSERT_TRUE(names.ok()) << names.error().message;
    auto installed = audit_.install(*names, [] { return t_inside_allowed_op; });
    ASSERT_TRUE(installed.ok()) << installed.error().message;
    const std::string error = load_library(library, lib_);
    ASSERT_TRUE(error.empty()) << error;
  }

  // A cuBLAS handle on the given stream, created before the audit is installed (its set-up is
  // the evaluator's, not the candidate's).
  void create_cublas() {
    ASSERT_CUBLAS(cublasCreate(&cublas_));
    ASSERT_CUBLAS(cublasSetStream(cublas_, given_));
  }

  void sgemm(cudaStream_t stream) {
    ASSERT_CUBLAS(cublasSetStream(cublas_, stream));
    const float one = 1.0f;
    const float zero = 0.0f;
    ASSERT_CUBLAS(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, kMatrix, kMatrix, kMatrix, &one, a_, kMatrix, b_,
                              kMatrix, &zero, c_, kMatrix));
  }

  // One call: launches `body` inside begin_call/end_call and waits for the device before closing.
  template <typename Body>
  CallLaunches call(Body body, void* given_stream) {
    audit_.begin_call(given_stream);
    body();
    const cudaError_t synced = cudaDeviceSynchronize();
    CallLaunches r = audit_.end_call();
    EXPECT_EQ(synced, cudaSuccess) << "cudaDeviceSynchronize after the call: " << cuda_text(synced);
    return r;
  }
  template <typename Body>
  CallLaunches call(Body body) {
    return call(body, given_);
  }

  // A call of one own-kernel launch must count exactly one own kernel, nothing else.
  void expect_one_own_kernel(const char* what, const CallLaunches& r) {
    print(what, r);
    EXPECT_EQ(r.n_kernels, 1) << what << ": a launch judged twice (runtime and driver) or not at all";
    EXPECT_EQ(r.n_own, 1) << what;
    EXPECT_EQ(r.n_foreign, 0) << what;
    EXPECT_EQ(r.n_other_stream_launches, 0) << what;
    EXPECT_TRUE(r.audit_intact) << what;
    EXPECT_TRUE(r.only_own_or_allowed()) << what;
  }

  void own_launches_count_as_own(const char* library) {
    ASSERT_NO_FATAL_FAILURE(install_and_load(library));
    expect_one_own_kernel("<<<>>> (C++ name)", call([&] { ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_)); }));
    expect_one_own_kernel("<<<>>> (extern \"C\" name)", call([&] { ASSERT_CUDA(lib_.add_one(x_, kN, given_)); }));
    expect_one_own_kernel("cudaLaunchKernelEx", call([&] { ASSERT_CUDA(lib_.launch_ex(x_, kN, given_)); }));
    expect_one_own_kernel("cuLaunchKernel", call([&] { ASSERT_CUDA(lib_.driver_launch(x_, kN, given_)); }));
  }

  LaunchAudit audit_;
  TestLibrary lib_;
  cublasHandle_t cublas_ = nullptr;
  float* x_ = nullptr;
  float* a_ = nullptr;
  float* b_ = nullptr;
  float* c_ = nullptr;
  cudaStream_t given_ = nullptr;
};

TEST_F(LaunchAuditGpuTest, OwnKernelNamesComeFromTheLibraryFile) {
  auto names = own_kernel_names({AUDIT_KERNELS_SHARED});
  ASSERT_TRUE(names.ok()) << names.error().message;
  for (const char* name : {"_Z12scale_kernelPffi", "add_one_kernel", "_Z19add_constant_kernelILi2EEvPfi",
                           "_Z19add_constant_kernelILi3EEvPfi"}) {
    EXPECT_TRUE(names_contain(*names, name)) << name << " missing from " << testing::PrintToString(*names);
  }
  auto plain = own_kernel_names({AUDIT_PLAIN_LIBRARY});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(plain->empty()) << testing::PrintToString(*plain);
}

TEST_F(LaunchAuditGpuTest, OwnLaunchesCountAsOwnWithTheSharedRuntime) {
  own_launches_count_as_own(AUDIT_KERNELS_SHARED);
}

TEST_F(LaunchAuditGpuTest, OwnLaunchesCountAsOwnWithTheStaticRuntime) {
  own_launches_count_as_own(AUDIT_KERNELS_STATIC);
}

// A launch the driver refuses is still an own launch made (n_own) but one that ran nothing
// (n_own_failed): a call whose own launches all failed ran no kernel of its own.
TEST_F(LaunchAuditGpuTest, RefusedOwnLaunchesAreCountedAsFailed) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches refused = call([&] {
    EXPECT_NE(lib_.oversized_launch(x_, kN, given_), 0) << "a 2,048-thread block was launched";
  });
  print("an oversized own launch", refused);
  EXPECT_EQ(refused.n_own, 1);
  EXPECT_EQ(refused.n_own_failed, 1);
  EXPECT_EQ(refused.n_foreign, 0);

  const CallLaunches mixed = call([&] {
    EXPECT_NE(lib_.oversized_launch(x_, kN, given_), 0);
    ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_));
    ASSERT_CUDA(lib_.driver_launch(x_, kN, given_));
  });
  print("a refused launch, then two that ran", mixed);
  EXPECT_EQ(mixed.n_own, 3);
  EXPECT_EQ(mixed.n_own_failed, 1);
  EXPECT_EQ(to_json(mixed).value("n_own_failed", -1), 1);

  const CallLaunches next = call([&] { ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_)); });
  EXPECT_EQ(next.n_own_failed, 0) << "a refused launch of an earlier call counted again";
}

TEST_F(LaunchAuditGpuTest, CublasKernelsAreForeign) {
  ASSERT_NO_FATAL_FAILURE(create_cublas());
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] { ASSERT_NO_FATAL_FAILURE(sgemm(given_)); });
  print("cublasSgemm", r);
  EXPECT_GE(r.n_foreign, 1) << "cuBLAS's kernels were not seen (launched outside the audited entry points?)";
  EXPECT_FALSE(r.foreign_kernels.empty());
  EXPECT_GE(r.n_foreign_since_install, r.n_foreign);
  EXPECT_FALSE(r.only_own_or_allowed());
  EXPECT_TRUE(r.audit_intact);

  const CallLaunches next = call([] {});
  print("the call after", next);
  EXPECT_EQ(next.n_foreign, 0);
  EXPECT_EQ(next.n_foreign_between_calls, 0);
  EXPECT_TRUE(next.foreign_kernels.empty());
  EXPECT_TRUE(next.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, ForeignKernelsBetweenCallsAreReportedByTheNextCall) {
  ASSERT_NO_FATAL_FAILURE(create_cublas());
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  ASSERT_NO_FATAL_FAILURE(sgemm(given_));  // at load time, outside any call
  ASSERT_CUDA(cudaDeviceSynchronize());
  const CallLaunches r = call([&] { ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_)); });
  print("own call after a foreign launch at load", r);
  EXPECT_EQ(r.n_own, 1);
  EXPECT_EQ(r.n_foreign, 0);
  EXPECT_GE(r.n_foreign_between_calls, 1);
  EXPECT_FALSE(r.foreign_kernels.empty());
  EXPECT_FALSE(r.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, KernelsInsideAnAllowedOpAreAllowed) {
  ASSERT_NO_FATAL_FAILURE(create_cublas());
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] {
    const AllowedOpScope op;
    ASSERT_NO_FATAL_FAILURE(sgemm(given_));
    ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_));  // own stays own inside an operator
  });
  print("inside an allowed operator", r);
  EXPECT_GE(r.n_inside_allowed_ops, 1);
  EXPECT_EQ(r.n_own, 1);
  EXPECT_EQ(r.n_foreign, 0) << testing::PrintToString(r.foreign_kernels);
  EXPECT_EQ(r.n_kernels, r.n_own + r.n_inside_allowed_ops);
  EXPECT_TRUE(r.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, GraphCapturedOnAPrivateStreamAndLaunchedOnTheGivenOneIsOwn) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] { ASSERT_CUDA(lib_.private_stream_graph(x_, kN, given_)); });
  print("graph captured on a private stream", r);
  EXPECT_EQ(r.n_own, 2);
  EXPECT_EQ(r.n_graph_kernels, 2);
  EXPECT_EQ(r.n_graph_launches, 1);
  EXPECT_EQ(r.n_other_stream_launches, 0) << "a captured launch is not work on another stream";
  EXPECT_EQ(r.n_foreign, 0) << testing::PrintToString(r.foreign_kernels);
  EXPECT_TRUE(r.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, GraphCapturedOnTheGivenStreamIsOwn) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] { ASSERT_CUDA(lib_.given_stream_graph(x_, kN, given_)); });
  print("graph captured on the given stream", r);
  EXPECT_EQ(r.n_own, 2);
  EXPECT_EQ(r.n_graph_kernels, 2);
  EXPECT_EQ(r.n_graph_launches, 1);
  EXPECT_EQ(r.n_other_stream_launches, 0);
  EXPECT_TRUE(r.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, GraphBuiltNodeByNodeIsOwn) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] { ASSERT_CUDA(lib_.node_graph(x_, kN, given_)); });
  print("graph built with cudaGraphAddKernelNode", r);
  EXPECT_EQ(r.n_own, 1);
  EXPECT_EQ(r.n_graph_kernels, 1);
  EXPECT_EQ(r.n_graph_launches, 1);
  EXPECT_EQ(r.n_foreign, 0) << testing::PrintToString(r.foreign_kernels);
  EXPECT_TRUE(r.only_own_or_allowed());
}

TEST_F(LaunchAuditGpuTest, CublasCapturedIntoAGraphIsForeignWhenCaptured) {
  ASSERT_NO_FATAL_FAILURE(create_cublas());
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  // At load time: cuBLAS captured into a graph on a private stream, nothing launched yet.
  cudaStream_t capture = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
  ASSERT_NO_FATAL_FAILURE(sgemm(capture));
  cudaGraph_t graph = nullptr;
  ASSERT_CUDA(cudaStreamEndCapture(capture, &graph));
  cudaGraphExec_t exec = nullptr;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  // The call only replays it.
  const CallLaunches r = call([&] { ASSERT_CUDA(cudaGraphLaunch(exec, given_)); });
  print("a graph of cuBLAS captured at load, launched in the call", r);
  EXPECT_EQ(r.n_graph_launches, 1);
  EXPECT_GE(r.n_foreign_between_calls, 1) << "the captured cuBLAS kernels were not judged at capture";
  EXPECT_FALSE(r.only_own_or_allowed());
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaStreamDestroy(capture));
}

TEST_F(LaunchAuditGpuTest, LaunchesOnOtherStreamsAreCounted) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  const CallLaunches r = call([&] { ASSERT_CUDA(lib_.other_stream(x_, kN)); });
  print("a launch on a stream of the candidate's", r);
  EXPECT_EQ(r.n_own, 1);
  EXPECT_EQ(r.n_other_stream_launches, 1);

  // The legacy default stream as the call's stream: a launch on stream 0 is on it, one on
  // given_ is not.
  const CallLaunches legacy = call(
      [&] {
        ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, nullptr));
        ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_));
      },
      nullptr);
  print("the legacy stream given", legacy);
  EXPECT_EQ(legacy.n_own, 2);
  EXPECT_EQ(legacy.n_other_stream_launches, 1);
}

TEST_F(LaunchAuditGpuTest, ASecondSubscriberIsRefused) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  CUpti_SubscriberHandle other = nullptr;
  const CUptiResult r = cuptiSubscribe(
      &other, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr);
  if (r == CUPTI_SUCCESS) cuptiUnsubscribe(other);
  EXPECT_EQ(r, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) << "cuptiSubscribe returned " << static_cast<int>(r);
  LaunchAudit second;
  auto installed = second.install({});
  ASSERT_FALSE(installed.ok());
  EXPECT_NE(installed.error().message.find("subscriber"), std::string::npos) << installed.error().message;
  expect_one_own_kernel("after the refused subscribers", call([&] { ASSERT_CUDA(lib_.scale(x_, kN, 2.0f, given_)); }));
}

TEST_F(LaunchAuditGpuTest, FinalizingCuptiDuringACallIsNoticed) {
  ASSERT_NO_FATAL_FAILURE(install_and_load(AUDIT_KERNELS_SHARED));
  // In a process of its own (the death-test child re-runs this test up to here): CUPTI cannot be
  // brought back for the tests after this one.
#ifdef GTEST_FLAG_SET
  GTEST_FLAG_SET(death_test_style, "threadsafe");
#else
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
#endif
  EXPECT_EXIT(
      {
        audit_.begin_call(given_);
        const CUptiResult finalized = cuptiFinalize();
        const int launched = lib_.scale(x_, kN, 2.0f, given_);
        const CallLaunches r = audit_.end_call();
        std::fprintf(stderr, "cuptiFinalize: %d, launch: %d, record: %s\n", static_cast<int>(finalized), launched,
                     to_json(r).dump().c_str());
        std::_Exit(finalized == CUPTI_SUCCESS && !r.audit_intact ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kernelrl::audit
