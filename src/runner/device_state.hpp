// What a GPU runner keeps of its own CUDA context (runner/device_runner.hpp for native candidates,
// eval/kernelbench_serve.hpp for kernelbench ones): the child's arena, opened through CUDA IPC, the
// stream native candidates are given, and a buffer of twice the L2 to flush it with. Plain CUDA
// runtime calls, never torch's: a kernelbench candidate shares the runner's interpreter and could
// intercept torch's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "runner/protocol.hpp"

namespace kernelrl::runner {

struct DeviceState {
  cudaStream_t stream = nullptr;  // the stream a native candidate is given
  void* flush_buffer = nullptr;
  std::size_t flush_bytes = 0;
  unsigned flushes = 0;
  char message[512] = {};
};

// The device of the header, the arena its IPC handle names, the stream and the flush buffer; an
// error text, or empty.
std::string set_up_device(const Header* h, DeviceState& s, void*& arena);

// First in a call (and in an idle call, so both are timed alike): fills twice the L2 from this
// context, only enqueued on the runner's stream: the call's kernels queue behind it (the legacy
// default stream, torch's, waits for this blocking stream), so their launches are hidden behind
// the flush as they are behind the timer's flush in one process. The child has flushed L2 itself
// before the clock started; this flush is the launches' cover, and is in the idle calls too.
void flush_device(void* state);

// After the candidate returned: all of its work, on any stream of this context, ends inside the
// call. nullptr when it ended cleanly, else the CUDA error (kept in the state).
const char* finish_device(void* state);

}  // namespace kernelrl::runner
