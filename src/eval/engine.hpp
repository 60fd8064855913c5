// The evaluation engine as a user sees it: compile through the pool and cache, evaluate in the
// device's workers (several evaluations at once, timing one at a time), one result record per
// (task, candidate). Thread-safe.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "compile/compiler.hpp"
#include "compile/pool.hpp"
#include "eval/options.hpp"
#include "eval/protocol.hpp"
#include "eval/ref_timing_cache.hpp"
#include "eval/result.hpp"
#include "sandbox/worker_client.hpp"
#include "task/manifest.hpp"
#include "task/signature.hpp"

namespace kernelrl::eval {

struct EngineConfig {
  std::string worker_binary;             // the kernelrl binary (runs `kernelrl worker`)
  std::filesystem::path cache_dir;       // compile cache root; empty = common::cache_root()/compile
  unsigned n_compile_threads = 0;        // 0 = one per core
  std::string cuda_arch;                 // "90"; empty = the device's, or 90 without a GPU
  bool use_cache = true;
  bool fast_native_compile = true;       // nvcc's front ends side by side + host precompiled headers
                                         // (compile::CompileOptions host_pch, parallel_nvcc); false: nvcc as is
  bool system_access_check = true;       // compile::CompileOptions::system_access_check: false only to test
                                         // the sandbox behind it
  std::vector<std::string> compile_read_roots;  // folders or files the compilers may read beyond the
                                         // detected toolchain, headers and interpreter paths (compile/read_roots.hpp;
                                         // also $KERNELRL_COMPILE_READ_ROOTS), for unusual layouts
  double compile_timeout_s = 60;         // native and host
  double kernelbench_compile_timeout_s = 900;  // load_inline builds with torch headers take minutes
  bool reuse_ref_timing = true;          // time each task's reference once per engine, not per candidate
  unsigned n_workers = 0;                // evaluations at once; 0 = 4 on a GPU, 1 on the CPU. Children
                                         // share the device in setup and correctness; timing is exclusive
  unsigned warm_children = 1;            // children each worker forks ahead of its requests (1-4); each
                                         // creates its CUDA context meanwhile
  unsigned cuda_max_connections = 2;     // CUDA_DEVICE_MAX_CONNECTIONS of the evaluation processes (unless
                                         // set in the environment; 0: CUDA's 8). Fewer hardware queues make
                                         // a context faster to create, and the driver creates them one at a
                                         // time: on the H200, four processes at once made 4.5 contexts/s
                                         // with 8 queues, 7.2 with 2, 8.4 with 1 (docs/engine.md); a
                                         // candidate's streams beyond 2 then share queues
  std::string gpu;                       // CUDA_VISIBLE_DEVICES of the engine's workers: the one GPU of
                                         // several this engine evaluates on (engine_set.hpp); empty: the
                                         // environment's
  common::RuleSet rules = common::RuleSet::STRICT;  // kernelbench candidates' rule set unless a job names one
  EvalOptions options;                   // options.device "auto" is resolved when the engine starts
  // Tasks below these folders are code nobody vouched for (the service's jobs that sent a task as
  // text): each is loaded only in a fresh evaluating child after that child confined its files
  // (eval/child_task_confinement.hpp), never in the worker nor in a child forked ahead.
  std::vector<std::filesystem::path> untrusted_task_folders;
};

// One unit of work.
struct EvalJob {
  std::filesystem::path task;
  std::filesystem::path candidate;
  std::optional<common::Format> format;  // empty: from the candidate's extension
  std::optional<std::string> device;     // "cuda" or "cpu"; empty: native cuda, host cpu, kernelbench the engine's
  std::optional<common::RuleSet> rules;  // empty: EngineConfig::rules
  std::optional<EvalOptions> options;    // empty: EngineConfig::options; its `device` is ignored (the
                                         // engine's, or `device` above)
};

// Signature and eager reference time of a task on this device.
struct TaskInfo {
  task::Signature signature;
  TimingSummary ref_runtime;
  std::int64_t input_bytes = 0;       // all tensor inputs of get_inputs()
  std::vector<std::string> problems;  // degenerate outputs: non-finite, nearly zero/constant, seed-invariant
  nlohmann::json health;              // per-output statistics behind `problems`
  std::string device;
  nlohmann::json device_info;
  std::optional<task::ManifestEntry> manifest;  // from manifest.json beside the task, if it lists it
  double sol_us = 0;                            // speed of light on this GPU; 0 unknown
};

class Engine {
 public:
  ~Engine();
  // Spawns the worker and learns the device (device "auto" becomes "cuda" or "cpu").
  static common::Expected<std::unique_ptr<Engine>> create(EngineConfig config);

  // Evaluates one job. An Error means "could not evaluate" (missing file, broken task, a format
  // this device cannot run); everything the candidate did is in the EvalResult.
  common::Expected<EvalResult> evaluate(const EvalJob& job);

  // Compiles every job concurrently, evaluates as compiles finish; `on_done(i, result)` is called
  // once per job, in completion order, from the calling thread.
  std::vector<common::Expected<EvalResult>> evaluate_batch(
      const std::vector<EvalJob>& jobs,
      const std::function<void(std::size_t, const common::Expected<EvalResult>&)>& on_done = {});

  common::Expected<TaskInfo> task_info(const std::filesystem::path& task);

  const std::string& device() const { return device_; }  // "cuda" or "cpu"
  unsigned n_workers() const { return static_cast<unsigned>(workers_.size()); }
  const nlohmann::json& device_info() const { return device_info_; }
  const EngineConfig& config() const { return config_; }
  const compile::Compiler& compiler() const { return *compiler_; }

 private:
  Engine() = default;
  struct Prepared;
  common::Expected<Prepared> prepare(const EvalJob& job);
  common::Expected<EvalResult> finish(const EvalJob& job, Prepared& prepared);
  common::Expected<EvalResult> run_in_worker(const EvalJob& job, const Prepared& prepared, const std::string& artifact);
  // A TASK_INFO child for `task` (its signature, health and, when the options time kernels, the
  // reference timed alone); an error naming the task when it gives no usable record.
  common::Expected<ChildRecord> run_task_info(const std::filesystem::path& task, const EvalOptions& options,
                                              const std::string& device);
  // The task's reference timed by a child of its own (TASK_INFO) with the evaluation's options and
  // device, before any candidate of the task runs; nullopt when that fails.
  std::optional<TimingSummary> time_reference_alone(const std::filesystem::path& task, const ChildRequest& evaluation);
  EvalOptions options_for(const EvalJob& job) const;  // the job's options, or the engine's
  // `task` lies below one of EngineConfig::untrusted_task_folders (symbolic links resolved).
  bool task_is_untrusted(const std::filesystem::path& task) const;
  // Speed of light of a task (its manifest entry) on the GPU named in `device_info` and the floor
  // no honest kernel beats (eval/speed_of_light.hpp); zeros without an entry or for an unknown GPU.
  struct Roofline {
    double sol_us = 0;
    double floor_us = 0;
  };
  static Roofline roofline(const std::optional<task::ManifestEntry>& entry, const nlohmann::json& device_info);
  // A correct result faster than the roofline floor is measured again in a fresh child; still
  // under it, it becomes REJECTED with both times in the message.
  void check_roofline(const EvalJob& job, const Prepared& p, const std::string& artifact,
                      common::Expected<EvalResult>& evaluated);

  EngineConfig config_;
  std::string device_;
  nlohmann::json device_info_;
  std::unique_ptr<compile::Compiler> compiler_;
  std::unique_ptr<compile::CompilePool> pool_;
  // Waits for an idle worker and hands it out; the returned handle gives it back.
  class WorkerLease;
  WorkerLease lease_worker();

  std::filesystem::path own_dir_;  // the workers' sandbox::DeviceLock and scratch folders
  std::vector<std::filesystem::path> untrusted_roots_;  // untrusted_task_folders, canonical, at create
  std::vector<std::unique_ptr<sandbox::WorkerClient>> workers_;
  std::vector<sandbox::WorkerClient*> idle_workers_;
  std::mutex workers_mutex_;
  std::condition_variable worker_freed_;
  RefTimingCache ref_timings_;  // by task content hash: the reference is timed once per run
};

}  // namespace kernelrl::eval
