// Starts the ranks of a data-parallel run on this machine and watches them: the same command run N
// times, each process told its rank, the world size and where rank 0 serves the rendezvous store
// (KERNELRL_RANK, KERNELRL_WORLD_SIZE, KERNELRL_RENDEZVOUS_HOST, KERNELRL_RENDEZVOUS_PORT), and
// optionally pinned to one GPU. If a rank fails the others are stopped; none outlives the launcher.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "train/rank_split.hpp"

namespace kernelrl::train {

// What a rank process learns from its environment.
struct RankEnvironment {
  RankInfo info;
  std::string host = "127.0.0.1";  // where rank 0 serves the rendezvous store
  int port = 0;
};

// This process's rank, when a launcher started it (KERNELRL_RANK set); nullopt otherwise. An Error
// names the variable that is malformed or out of range.
common::Expected<std::optional<RankEnvironment>> rank_from_environment();

struct LaunchConfig {
  std::vector<std::string> command;  // the program (a path, not looked up on PATH) and its arguments
  int n_ranks = 1;                   // processes started, ranks 0 .. n_ranks - 1
  bool pin_gpus = false;             // rank i sees only GPU i (CUDA_VISIBLE_DEVICES=i)
  std::chrono::milliseconds grace{5000};  // after a rank fails: SIGTERM to the others, SIGKILL past this
};

// Runs the ranks and waits for all of them. Ok when every rank exits 0. When one exits otherwise,
// the rest (and their children: the ranks form one process group) are terminated and the Error
// names the first to fail and how ("rank 1 exited with status 3", "rank 0 was killed by signal 9").
// Every rank holds PR_SET_PDEATHSIG: killing the launcher kills the ranks. `pids` (optional)
// receives the ranks' process ids, all reaped when this returns. Blocks; not thread-safe (it reaps
// only its own children, by pid).
common::Fallible launch_ranks(const LaunchConfig& config, std::vector<pid_t>* pids = nullptr);

// A TCP port on the loopback interface that was free a moment ago (bound to port 0, then closed);
// -1 when none could be bound.
int free_loopback_port();

}  // namespace kernelrl::train
