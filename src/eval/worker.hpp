// The long-lived worker of one device: a single-threaded process that has imported Python and
// torch (never CUDA) and forks a fresh child per request. Requests and replies are JSON lines on
// two private pipes; nothing a task or candidate prints can reach them.
#pragma once

#include <string>

namespace kernelrl::eval {

// How a worker runs its children; the same for all its requests (`kernelrl worker` flags).
struct WorkerSettings {
  // The folder of the sandbox::DeviceLock shared by the engine's workers (its children share the
  // device in setup and correctness and hold it alone while timed); empty: none.
  std::string device_lock_dir;
  // CUDA_DEVICE_MAX_CONNECTIONS for the children (hardware work queues per CUDA context) unless the
  // environment already sets it; 0 leaves CUDA's default (8).
  unsigned cuda_max_connections = 0;
  // Children forked ahead of the next requests (each creates its CUDA context meanwhile); 1-4.
  unsigned warm_children = 1;
  // CUDA_VISIBLE_DEVICES of the worker and its children (one GPU of several: EngineConfig::gpu);
  // empty: the environment's.
  std::string gpu;
  // Where the worker makes its scratch folder (its children's files and logs): the engine's own
  // folder, which the engine removes even after killing the worker; empty: the system's temp folder.
  std::string scratch_in;
};

// Serves requests from in_fd until it closes; replies on out_fd. Returns the process exit code.
// Request:  WorkerRequest plus {"id": N}; reply: WorkerReply plus the same {"id": N} (eval/protocol.hpp).
int worker_main(int in_fd, int out_fd, const WorkerSettings& settings);

}  // namespace kernelrl::eval
