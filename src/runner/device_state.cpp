#include "runner/device_state.hpp"

#include <cstdio>
#include <cstring>

namespace kernelrl::runner {

namespace {

std::string cuda_failure(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

}  // namespace

void flush_device(void* state) {
  auto* s = static_cast<DeviceState*>(state);
  if (!s->flush_buffer) return;
  cudaMemsetAsync(s->flush_buffer, static_cast<int>(++s->flushes & 0xff), s->flush_bytes, s->stream);
}

const char* finish_device(void* state) {
  auto* s = static_cast<DeviceState*>(state);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return nullptr;
  std::snprintf(s->message, sizeof s->message, "CUDA error after the candidate's call: %s (%s)", cudaGetErrorString(e),
                cudaGetErrorName(e));
  return s->message;
}

std::string set_up_device(const Header* h, DeviceState& s, void*& arena) {
  cudaError_t e = cudaSetDevice(h->device);
  if (e != cudaSuccess) return cuda_failure("cudaSetDevice", e);
  cudaIpcMemHandle_t handle;
  static_assert(sizeof handle == kIpcHandleBytes);
  std::memcpy(&handle, h->ipc_handle, sizeof handle);
  if ((e = cudaIpcOpenMemHandle(&arena, handle, cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess) {
    return cuda_failure("cudaIpcOpenMemHandle", e);
  }
  if ((e = cudaStreamCreate(&s.stream)) != cudaSuccess) return cuda_failure("cudaStreamCreate", e);
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, h->device);
  s.flush_bytes = 2 * static_cast<std::size_t>(l2 > 0 ? l2 : 1 << 20);
  if ((e = cudaMalloc(&s.flush_buffer, s.flush_bytes)) != cudaSuccess) return cuda_failure("cudaMalloc", e);
  flush_device(&s);  // the first work of this context, before the candidate's
  if ((e = cudaStreamSynchronize(s.stream)) != cudaSuccess) return cuda_failure("the first flush", e);
  return {};
}

}  // namespace kernelrl::runner
