// Thin, checked wrappers over the CUDA runtime for the evaluating child: device facts, a blocking
// stream, events, L2 flushing, and the sticky-error check after a candidate's call. Every call is
// checked; failures come back as an Error naming the call, file and line. Only a child process
// that is allowed to touch CUDA may call these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/expected.hpp"

namespace kernelrl::eval::gpu {

struct DeviceFacts {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int n_sms = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;
};

// Number of CUDA devices usable here (0 when there is no driver or no GPU). Initialises CUDA.
int device_count();

common::Expected<DeviceFacts> device_facts(int device);

// A blocking stream (synchronises with the legacy default stream), so an end mark recorded on the
// legacy stream waits for all work on it and on every other blocking stream.
common::Expected<void*> create_blocking_stream();

// Fills a scratch buffer of 2 x L2 on `stream`, evicting what the last call left in L2.
class L2Flusher {
 public:
  common::Fallible init(std::int64_t l2_bytes);
  common::Fallible flush(void* stream);
  ~L2Flusher();

 private:
  void* buffer_ = nullptr;
  std::int64_t bytes_ = 0;
};

// Times one region: start() records on `stream`; stop() records the end mark on the legacy default
// stream (after everything enqueued on blocking streams), synchronises the whole device, and
// returns the elapsed milliseconds.
class EventTimer {
 public:
  common::Fallible init();
  common::Fallible start(void* stream);
  common::Expected<double> stop_ms();
  ~EventTimer();

 private:
  void* start_ = nullptr;
  void* end_ = nullptr;
};

struct DeviceMemory {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};
// cudaMemGetInfo on the current device: free memory is device-wide (every process's allocations).
common::Expected<DeviceMemory> device_memory();

// Device memory another process maps through CUDA IPC (a native candidate's own process:
// eval/device_runner.hpp): one cudaMalloc allocation, freed on destruction.
class SharedArena {
 public:
  common::Fallible init(std::size_t bytes);
  ~SharedArena();
  void* data() const { return data_; }
  int device() const { return device_; }
  // The cudaIpcMemHandle_t of the allocation (64 bytes).
  common::Fallible export_handle(unsigned char* out, std::size_t out_bytes) const;

 private:
  void* data_ = nullptr;
  int device_ = 0;
};

// The end of a call timed on the host clock (eval/timing.cpp): a one-thread kernel of this
// context, launched on `stream` and waited for. The GPU runs it only once it switches to this
// context, which it does when the other context's work has ended or its time slice has run out,
// so a candidate's process that answered before its kernels ended still has them timed (or, cut
// off by the time slice, has its outputs found unfinished). The kernel is one of the engine's own
// (device_check_kernels.cu); an engine built without them (a CPU libtorch) cannot time a candidate
// in another CUDA context: init() fails.
class EndMark {
 public:
  common::Fallible init();
  ~EndMark();
  common::Fallible mark_and_wait(void* stream);

 private:
  void* flag_ = nullptr;  // the word the kernel writes
};

// cudaDeviceSynchronize plus cudaGetLastError: the error a candidate's launch left, as text
// ("an illegal memory access was encountered (cudaErrorIllegalAddress)"), or OK.
common::Fallible synchronize_and_check();

}  // namespace kernelrl::eval::gpu
