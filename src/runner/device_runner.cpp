#include "runner/device_runner.hpp"

#include <cuda_runtime.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/protocol.hpp"
#include "sandbox/candidate_confinement.hpp"

namespace kernelrl::runner {

namespace {

struct DeviceState {
  cudaStream_t stream = nullptr;
  void* flush_buffer = nullptr;
  std::size_t flush_bytes = 0;
  unsigned flushes = 0;
  char message[512] = {};
};

// ARM: fills twice the L2 from this context, evicting what the last call (or the child's staging)
// left there; the GPU switches to this context here, before the clock starts, not inside the call.
void flush(void* state) {
  auto* s = static_cast<DeviceState*>(state);
  if (!s->flush_buffer) return;
  cudaMemsetAsync(s->flush_buffer, static_cast<int>(++s->flushes & 0xff), s->flush_bytes, s->stream);
  cudaStreamSynchronize(s->stream);
}

// After the candidate returned: all of its work, on any stream of this context, ends inside the call.
const char* finish(void* state) {
  auto* s = static_cast<DeviceState*>(state);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return nullptr;
  std::snprintf(s->message, sizeof s->message, "CUDA error after the candidate's call: %s (%s)", cudaGetErrorString(e),
                cudaGetErrorName(e));
  return s->message;
}

std::string cuda_failure(const char* what, cudaError_t e) {
  return std::string(what) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

// The context, the arena and the flush buffer; an error text, or empty.
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
  flush(&s);  // the first work of this context, before the candidate's
  if ((e = cudaStreamSynchronize(s.stream)) != cudaSuccess) return cuda_failure("the first flush", e);
  return {};
}

int usage(const char* why) {
  std::fprintf(stderr, "kernelrl-gpu-runner: %s\nusage: kernelrl-gpu-runner PAGES_FD PAGES_BYTES PARENT_PID ARTIFACT\n"
                       "(started by an evaluating child, not by hand)\n", why);
  return 64;
}

}  // namespace

int run_device_runner(int argc, char** argv) {
  if (argc != 5) return usage("expected 4 arguments");
  const int fd = std::atoi(argv[1]);
  const auto bytes = static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10));
  const auto parent = static_cast<pid_t>(std::atol(argv[3]));
  const std::string artifact = argv[4];
  if (::getppid() != parent) return usage("PARENT_PID is not this process's parent");
  if (bytes < kDataOffset) return usage("PAGES_BYTES is smaller than the protocol's header");
  auto pages = sandbox::SharedPages::map_memory_file(fd, bytes);
  if (!pages) return usage(pages.error().message.c_str());
  ::syscall(SYS_close_range, 3u, ~0u, 0u);  // the mapping stays; no descriptor of the child's is kept
  auto* h = reinterpret_cast<Header*>(pages->data());
  DeviceState state;
  void* arena = nullptr;
  const std::string failed = set_up_device(h, state, arena);
  if (!failed.empty()) {
    write_text(h, failed);
    h->rc = -1;
    h->reply.ring(1);
    _exit(1);
  }
  write_text(h, sandbox::confine_candidate_process().dump());
  h->rc = 0;
  h->reply.ring(1);
  RunnerHooks hooks;
  hooks.data = static_cast<std::byte*>(arena);
  hooks.data_bytes = h->arena_bytes;
  hooks.device = DLDevice{kDLCUDA, h->device};
  hooks.stream = state.stream;
  hooks.flush = flush;
  hooks.finish = finish;
  hooks.state = &state;
  serve(h, parent, artifact, hooks);
}

}  // namespace kernelrl::runner
