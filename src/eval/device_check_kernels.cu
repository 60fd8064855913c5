#include "eval/device_check_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

namespace kernelrl::eval::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;

// What every block adds into with atomics; zeroed before each launch.
struct DeviceSums {
  unsigned long long n_bad;
  double sum_sq_error;
  double sum_sq_expected;
};

__device__ double decode(float v) { return v; }
__device__ double decode(double v) { return v; }
__device__ double decode(__half v) { return __half2float(v); }
__device__ double decode(__nv_bfloat16 v) { return __bfloat162float(v); }

// One element per family, compare_buffers' rule (checker.cpp) to the letter.
struct FloatRule {
  template <class T>
  __device__ static void apply(T a_raw, T e_raw, double atol, double rtol, unsigned long long& bad, double& sq_err,
                               double& sq_ref) {
    const double a = decode(a_raw), e = decode(e_raw);
    if (isfinite(a) && isfinite(e)) {
      const double abs_error = fabs(a - e);
      sq_err += abs_error * abs_error;
      sq_ref += e * e;
      if (!(abs_error <= atol + rtol * fabs(e))) ++bad;
    } else if (!((isnan(a) && isnan(e)) || a == e)) {
      ++bad;
    }
  }
};

struct IntRule {
  template <class T>
  __device__ static void apply(T a, T e, double atol, double rtol, unsigned long long& bad, double&, double&) {
    const unsigned long long diff = a > e ? static_cast<unsigned long long>(a) - static_cast<unsigned long long>(e)
                                          : static_cast<unsigned long long>(e) - static_cast<unsigned long long>(a);
    if (diff != 0 && !(static_cast<double>(diff) <= atol + rtol * fabs(static_cast<double>(e)))) ++bad;
  }
};

struct BoolRule {
  __device__ static void apply(unsigned char a, unsigned char e_raw, double, double, unsigned long long& bad, double&,
                               double&) {
    const unsigned char e = e_raw != 0 ? 1 : 0;
    if (a > 1 || a != e) ++bad;  // a byte above 1 is not a bool at all (the poison)
  }
};

// Sums the three per-thread values over the block and adds them into `out` once.
__device__ void add_block_sums(unsigned long long bad, double sq_err, double sq_ref, DeviceSums* out) {
  __shared__ unsigned long long s_bad[kThreads / 32];
  __shared__ double s_err[kThreads / 32], s_ref[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    bad += __shfl_down_sync(0xffffffffu, bad, offset);
    sq_err += __shfl_down_sync(0xffffffffu, sq_err, offset);
    sq_ref += __shfl_down_sync(0xffffffffu, sq_ref, offset);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    s_bad[warp] = bad;
    s_err[warp] = sq_err;
    s_ref[warp] = sq_ref;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w) {
    bad += s_bad[w];
    sq_err += s_err[w];
    sq_ref += s_ref[w];
  }
  if (bad) atomicAdd(&out->n_bad, bad);
  if (sq_err != 0) atomicAdd(&out->sum_sq_error, sq_err);
  if (sq_ref != 0) atomicAdd(&out->sum_sq_expected, sq_ref);
}

template <class Rule, class T>
__global__ void __launch_bounds__(kThreads) check_elements(const T* __restrict__ actual, const T* __restrict__ expected,
                                                           long long n, double atol, double rtol, DeviceSums* out) {
  unsigned long long bad = 0;
  double sq_err = 0, sq_ref = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Rule::apply(actual[i], expected[i], atol, rtol, bad, sq_err, sq_ref);
  }
  add_block_sums(bad, sq_err, sq_ref, out);
}

// Counts the `Word`s that differ (bytes / sizeof(Word) of them).
template <class Word>
__global__ void __launch_bounds__(kThreads) count_different_words(const Word* __restrict__ a, const Word* __restrict__ b,
                                                                  long long n, DeviceSums* out) {
  unsigned long long bad = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (sizeof(Word) == 16) {
      const Word x = a[i], y = b[i];
      bad += (x.x != y.x) | (x.y != y.y) | (x.z != y.z) | (x.w != y.w);
    } else {
      bad += a[i] != b[i];
    }
  }
  add_block_sums(bad, 0, 0, out);
}

// The end mark of a call timed on the host clock: the smallest work this context's GPU runs.
__global__ void end_mark(unsigned* flag) { *flag = 1u; }

common::Error cuda_error(cudaError_t e, const char* what) {
  return common::make_error(std::string(what) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

// The result buffer and the grid size, set up once per process.
struct Launch {
  DeviceSums* sums = nullptr;
  int blocks = 0;
};

common::Expected<Launch> launch_setup() {
  static Launch launch;
  if (launch.sums) return launch;
  int device = 0, n_sms = 0;
  if (auto e = cudaGetDevice(&device); e != cudaSuccess) return cuda_error(e, "cudaGetDevice");
  if (auto e = cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) {
    return cuda_error(e, "cudaDeviceGetAttribute");
  }
  if (auto e = cudaMalloc(&launch.sums, sizeof(DeviceSums)); e != cudaSuccess) return cuda_error(e, "cudaMalloc");
  launch.blocks = n_sms * kBlocksPerSm;
  return launch;
}

long long grid_for(const Launch& l, long long n) {
  const long long needed = (n + kThreads - 1) / kThreads;
  return needed < l.blocks ? (needed > 0 ? needed : 1) : l.blocks;
}

// Zeroes the sums, runs `launch_kernel(blocks, sums)` on the legacy stream and reads the sums back.
template <class F>
common::Expected<DeviceSums> run_and_read(long long n, F&& launch_kernel) {
  auto l = launch_setup();
  if (!l) return l.error();
  if (auto e = cudaMemsetAsync(l->sums, 0, sizeof(DeviceSums), cudaStreamLegacy); e != cudaSuccess) {
    return cuda_error(e, "cudaMemsetAsync");
  }
  launch_kernel(static_cast<unsigned>(grid_for(*l, n)), l->sums);
  if (auto e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, "launching a check kernel");
  DeviceSums host{};
  if (auto e = cudaMemcpyAsync(&host, l->sums, sizeof host, cudaMemcpyDeviceToHost, cudaStreamLegacy); e != cudaSuccess) {
    return cuda_error(e, "cudaMemcpyAsync");
  }
  if (auto e = cudaStreamSynchronize(cudaStreamLegacy); e != cudaSuccess) return cuda_error(e, "a check kernel");
  return host;
}

template <class Rule, class T>
common::Expected<DeviceSums> check_as(const void* a, const void* e, long long n, Tolerance tol) {
  return run_and_read(n, [&](unsigned blocks, DeviceSums* sums) {
    check_elements<Rule, T><<<blocks, kThreads, 0, cudaStreamLegacy>>>(static_cast<const T*>(a), static_cast<const T*>(e),
                                                                         n, tol.atol, tol.rtol, sums);
  });
}

}  // namespace

common::Expected<ElementCheckSums> check_elements_on_device(const void* actual, const void* expected,
                                                            std::int64_t numel, DType dtype, Tolerance tol) {
  common::Expected<DeviceSums> sums = DeviceSums{};
  if (numel > 0) {
    switch (dtype) {
      case DType::F32: sums = check_as<FloatRule, float>(actual, expected, numel, tol); break;
      case DType::F64: sums = check_as<FloatRule, double>(actual, expected, numel, tol); break;
      case DType::F16: sums = check_as<FloatRule, __half>(actual, expected, numel, tol); break;
      case DType::BF16: sums = check_as<FloatRule, __nv_bfloat16>(actual, expected, numel, tol); break;
      case DType::I8: sums = check_as<IntRule, signed char>(actual, expected, numel, tol); break;
      case DType::U8: sums = check_as<IntRule, unsigned char>(actual, expected, numel, tol); break;
      case DType::I16: sums = check_as<IntRule, short>(actual, expected, numel, tol); break;
      case DType::I32: sums = check_as<IntRule, int>(actual, expected, numel, tol); break;
      case DType::I64: sums = check_as<IntRule, long long>(actual, expected, numel, tol); break;
      case DType::BOOL: sums = check_as<BoolRule, unsigned char>(actual, expected, numel, tol); break;
    }
  }
  if (!sums) return sums.error();
  return ElementCheckSums{static_cast<std::int64_t>(sums->n_bad), sums->sum_sq_error, sums->sum_sq_expected};
}

common::Expected<bool> bytes_equal_on_device(const void* a, const void* b, std::int64_t bytes) {
  if (bytes <= 0) return true;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16 == 0;
  const long long words = aligned ? bytes / 16 : 0;
  if (words > 0) {
    auto sums = run_and_read(words, [&](unsigned blocks, DeviceSums* s) {
      count_different_words<uint4><<<blocks, kThreads, 0, cudaStreamLegacy>>>(static_cast<const uint4*>(a),
                                                                              static_cast<const uint4*>(b), words, s);
    });
    if (!sums) return sums.error();
    if (sums->n_bad != 0) return false;
  }
  const long long done = words * 16, rest = bytes - done;
  if (rest == 0) return true;
  auto sums = run_and_read(rest, [&](unsigned blocks, DeviceSums* s) {
    count_different_words<unsigned char><<<blocks, kThreads, 0, cudaStreamLegacy>>>(
        static_cast<const unsigned char*>(a) + done, static_cast<const unsigned char*>(b) + done, rest, s);
  });
  if (!sums) return sums.error();
  return sums->n_bad == 0;
}

common::Fallible launch_end_mark(void* flag, void* stream) {
  end_mark<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<unsigned*>(flag));
  if (auto e = cudaGetLastError(); e != cudaSuccess) return cuda_error(e, "the end mark's launch");
  return common::Ok{};
}

common::Fallible preload_device_checks() {
  auto l = launch_setup();
  if (!l) return l.error();
  // Asking for a kernel's attributes loads its module (lazy loading) without running anything.
  cudaFuncAttributes attributes{};
  const void* kernels[] = {
      reinterpret_cast<const void*>(&check_elements<FloatRule, float>),
      reinterpret_cast<const void*>(&check_elements<FloatRule, double>),
      reinterpret_cast<const void*>(&check_elements<FloatRule, __half>),
      reinterpret_cast<const void*>(&check_elements<FloatRule, __nv_bfloat16>),
      reinterpret_cast<const void*>(&count_different_words<uint4>),
      reinterpret_cast<const void*>(&count_different_words<unsigned char>),
      reinterpret_cast<const void*>(&end_mark),
  };
  for (const void* k : kernels) {
    if (auto e = cudaFuncGetAttributes(&attributes, k); e != cudaSuccess) return cuda_error(e, "cudaFuncGetAttributes");
  }
  return common::Ok{};
}

}  // namespace kernelrl::eval::gpu
