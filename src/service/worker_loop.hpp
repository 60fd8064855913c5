// One evaluation slot of `kernelrl worker --redis`: an engine (pinned to one GPU, or the CPU) and
// as many consumer threads as the engine evaluates at once plus `prefetch`, each taking one job at
// a time from the consumer group, evaluating it and storing the record before acknowledging it
// (queue.hpp). A
// heartbeat thread announces the slot and keeps the jobs it holds from being claimed; jobs held by a
// slot that stopped heartbeating for visibility_timeout_s are claimed by another, and a job whose
// holders died max_attempts times ends as a RUNTIME_ERROR record.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "eval/engine.hpp"
#include "service/redis.hpp"

namespace kernelrl::service {

struct SlotConfig {
  RedisAccess redis;                   // URL, password file, whether none may be needed
  std::string prefix = "kernelrl";     // Redis key prefix, as the front's
  std::string slot = "cpu";            // "gpu<N>" or "cpu": part of the worker's name
  eval::EngineConfig engine;           // the engine of this slot (options are each job's defaults)
  double visibility_timeout_s = 60;    // a job whose holder sent no heartbeat this long is claimed by another
  double heartbeat_s = 2;              // heartbeat and in-flight refresh period (well under the above)
  int max_attempts = 3;                // a job whose holders died this many times ends as RUNTIME_ERROR
  unsigned prefetch = 1;               // jobs taken beyond the engine's free evaluators, so their compile
                                       // (and file writing) overlaps the evaluations in progress
  long long result_ttl_s = 7 * 86400;  // results expire this long after they are stored
  std::filesystem::path work_dir;      // task and candidate files of the jobs; empty: a private temp folder
};

// Runs the slot until `stop` is set, then finishes the jobs in hand and returns 0. Returns 2 when
// the engine cannot start (message on stderr). While Redis is away it retries with backoff; a result
// evaluated meanwhile is stored once Redis is back.
int run_slot(const SlotConfig& config, const std::atomic<bool>& stop);

}  // namespace kernelrl::service
