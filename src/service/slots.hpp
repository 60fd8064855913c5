// `kernelrl worker --redis URL --gpus all|0,1,...`: one evaluation process (slot, worker_loop.hpp)
// per GPU, each pinned with CUDA_VISIBLE_DEVICES. With one GPU, or none (a CPU slot), the slot runs
// in this process; with several, this process supervises one child per GPU, restarts a child that
// dies, and on SIGTERM/SIGINT passes the signal on and waits for them to finish their jobs.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace kernelrl::service {

// The ids come from common::resolve_gpus (common/gpu_list.hpp).
// Runs `argv` (this command line, with "--slot NAME" appended per child) once per GPU id with
// CUDA_VISIBLE_DEVICES set to it, until `stop`; a child that exits is started again after a pause
// (doubling from 1 s to 60 s while it keeps failing at once), one that exits with the usage code
// (64) ends the supervision. Returns 0, or 64 after a usage error.
int supervise_slots(const std::vector<std::string>& argv, const std::vector<std::string>& gpu_ids,
                    const std::atomic<bool>& stop);

}  // namespace kernelrl::service
