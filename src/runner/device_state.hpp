// What a GPU runner keeps of its own CUDA context (runner/device_runner.hpp for native candidates,
// eval/kernelbench_serve.hpp for kernelbench ones): the child's arena mapped through CUDA IPC, a
// stream, and a buffer of twice the L2 to flush it with. Plain CUDA runtime calls, never torch's:
// a kernelbench candidate shares the runner's interpreter and could intercept torch's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "runner/protocol.hpp"

namespace kernelrl::runner {

struct DeviceState {
  cudaStream_t stream = nullptr;
  void* flush_buffer = nullptr;
  std::size_t flush_bytes = 0;
  unsigned flushes = 0;
  char message[512] = {};
};

// The device of the header, the arena its IPC handle names, the stream and the flush buffer; an
// error text, or empty.
std::string set_up_device(const Header* h, DeviceState& s, void*& arena);

// ARM: fills twice the L2 from this context, evicting what the last call (or the child's staging)
// left there. Only enqueued on the runner's stream: the call's work queues behind it (the legacy
// default stream, torch's, waits for this blocking stream), so the launches of its first kernels
// are hidden behind the flush as in process; the call's end waits for it (finish_device).
void flush_device(void* state);

// After the candidate returned: all of its work, on any stream of this context, ends inside the
// call. nullptr when it ended cleanly, else the CUDA error (kept in the state).
const char* finish_device(void* state);

}  // namespace kernelrl::runner
