#include "eval/gpu.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#if KERNELRL_EVAL_CUDA_KERNELS
#include "eval/device_check_kernels.hpp"
#endif

namespace kernelrl::eval::gpu {

namespace {
common::Error cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  return common::make_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                            cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}
}  // namespace

#define KERNELRL_CUDA_CHECK(call)                                            \
  do {                                                                       \
    cudaError_t kernelrl_e = (call);                                         \
    if (kernelrl_e != cudaSuccess) return cuda_error(kernelrl_e, #call, __FILE__, __LINE__); \
  } while (0)

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

common::Expected<DeviceFacts> device_facts(int device) {
  cudaDeviceProp p{};
  KERNELRL_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceFacts f;
  f.name = p.name;
  f.compute_capability_major = p.major;
  f.compute_capability_minor = p.minor;
  f.n_sms = p.multiProcessorCount;
  f.l2_bytes = p.l2CacheSize;
  f.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  KERNELRL_CUDA_CHECK(cudaDriverGetVersion(&f.driver_version));
  KERNELRL_CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime_version));
  return f;
}

common::Expected<void*> create_blocking_stream() {
  cudaStream_t s = nullptr;
  KERNELRL_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
  return static_cast<void*>(s);
}

common::Fallible L2Flusher::init(std::int64_t l2_bytes) {
  bytes_ = 2 * (l2_bytes > 0 ? l2_bytes : (64 << 20));
  KERNELRL_CUDA_CHECK(cudaMalloc(&buffer_, static_cast<size_t>(bytes_)));
  return common::Ok{};
}

common::Fallible L2Flusher::flush(void* stream) {
  KERNELRL_CUDA_CHECK(cudaMemsetAsync(buffer_, 0x5a, static_cast<size_t>(bytes_), static_cast<cudaStream_t>(stream)));
  return common::Ok{};
}

L2Flusher::~L2Flusher() {
  if (buffer_) cudaFree(buffer_);
}

common::Fallible EventTimer::init() {
  cudaEvent_t a, b;
  KERNELRL_CUDA_CHECK(cudaEventCreate(&a));
  KERNELRL_CUDA_CHECK(cudaEventCreate(&b));
  start_ = a;
  end_ = b;
  return common::Ok{};
}

common::Fallible EventTimer::start(void* stream) {
  KERNELRL_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_), static_cast<cudaStream_t>(stream)));
  return common::Ok{};
}

common::Expected<double> EventTimer::stop_ms() {
  KERNELRL_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(end_), cudaStreamLegacy));
  KERNELRL_CUDA_CHECK(cudaDeviceSynchronize());
  KERNELRL_CUDA_CHECK(cudaGetLastError());
  float ms = 0;
  KERNELRL_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(end_)));
  return static_cast<double>(ms);
}

EventTimer::~EventTimer() {
  if (start_) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (end_) cudaEventDestroy(static_cast<cudaEvent_t>(end_));
}

common::Expected<DeviceMemory> device_memory() {
  std::size_t free_bytes = 0, total_bytes = 0;
  KERNELRL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return DeviceMemory{free_bytes, total_bytes};
}

common::Fallible SharedArena::init(std::size_t bytes) {
  KERNELRL_CUDA_CHECK(cudaGetDevice(&device_));
  KERNELRL_CUDA_CHECK(cudaMalloc(&data_, bytes));
  return common::Ok{};
}

SharedArena::~SharedArena() {
  if (data_) cudaFree(data_);
}

common::Fallible SharedArena::export_handle(unsigned char* out, std::size_t out_bytes) const {
  cudaIpcMemHandle_t handle;
  if (out_bytes != sizeof handle) return common::make_error("an IPC handle takes " + std::to_string(sizeof handle) + " bytes");
  KERNELRL_CUDA_CHECK(cudaIpcGetMemHandle(&handle, data_));
  std::memcpy(out, &handle, sizeof handle);
  return common::Ok{};
}

common::Fallible EndMark::init() {
#if KERNELRL_EVAL_CUDA_KERNELS
  KERNELRL_CUDA_CHECK(cudaMalloc(&flag_, sizeof(std::uint32_t)));
  return common::Ok{};
#else
  return common::make_error("this engine was built without its CUDA kernels (a CPU libtorch): it cannot end a call "
                            "timed on the host clock in its own CUDA context");
#endif
}

EndMark::~EndMark() {
  if (flag_) cudaFree(flag_);
}

common::Fallible EndMark::mark_and_wait(void* stream) {
#if KERNELRL_EVAL_CUDA_KERNELS
  if (auto launched = launch_end_mark(flag_, stream); !launched) return launched;
  KERNELRL_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return common::Ok{};
#else
  (void)stream;
  return common::make_error("no end mark: this engine was built without its CUDA kernels");
#endif
}

common::Fallible synchronize_and_check() {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    return common::make_error(std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")");
  }
  return common::Ok{};
}

}  // namespace kernelrl::eval::gpu
