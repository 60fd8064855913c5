// The long-lived worker of one device: a single-threaded process that has imported Python and
// torch (never CUDA) and forks a fresh child per request. Requests and replies are JSON lines on
// two private pipes; nothing a task or candidate prints can reach them.
#pragma once

namespace kernelrl::eval {

// Serves requests from in_fd until it closes; replies on out_fd. Returns the process exit code.
// Request:  {"id": N, "task": PATH, "child": ChildRequest}
// Reply:    {"id": N, "record": {...child's final record...}, "outcome": {...}} or {"id": N, "error": TEXT}
int worker_main(int in_fd, int out_fd);

}  // namespace kernelrl::eval
