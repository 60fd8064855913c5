// The long-lived worker of one device: a single-threaded process that has imported Python and
// torch (never CUDA) and forks a fresh child per request. Requests and replies are JSON lines on
// two private pipes; nothing a task or candidate prints can reach them.
#pragma once

#include <string>

namespace kernelrl::eval {

// Serves requests from in_fd until it closes; replies on out_fd. Returns the process exit code.
// `device_lock_dir`: the folder of the sandbox::DeviceLock shared by the engine's workers (its
// children share the device in setup and correctness and hold it alone while timed); empty: none.
// `cuda_max_connections`: CUDA_DEVICE_MAX_CONNECTIONS for the children (hardware work queues per
// CUDA context) unless the environment already sets it; 0 leaves CUDA's default (8).
// Request:  {"id": N, "task": PATH, "child": ChildRequest, "warm_children": K}
// Reply:    {"id": N, "record": {...child's final record...}, "outcome": {...}} or {"id": N, "error": TEXT}
int worker_main(int in_fd, int out_fd, const std::string& device_lock_dir, unsigned cuda_max_connections = 0);

}  // namespace kernelrl::eval
