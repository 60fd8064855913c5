// `kernelrl serve` and `kernelrl worker --redis` (the evaluation service, src/service) and the
// --eval-service option of `rollout` and `train`. In a build without the service (no hiredis or
// cpp-httplib) the commands exist and refuse with exit 2, saying what to install.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/engine.hpp"
#include "rollout/evaluator.hpp"

namespace kernelrl::cli {

struct ServeArgs {
  std::string redis_url;
  std::string redis_password_file;
  bool redis_without_password = false;
  std::string listen = "127.0.0.1:8080";
  std::string token_file;
  std::vector<std::string> task_sets;  // default: the source tree's tasks/
  std::string prefix = "kernelrl";
  double max_request_mb = 64;
  std::size_t max_batch_jobs = 10000;
  long long max_queue = 100000;
  int retry_after_s = 5;
  double max_wait_s = 60;
  long long result_ttl_s = 7 * 86400;
  int http_threads = 64;
  double worker_alive_s = 30;
  bool allow_task_source = false;
  bool no_task_source = false;  // the default; kept so deployments that name it still start
  bool print_config = false;
};

struct WorkerArgs {
  std::string redis_url;
  std::string redis_password_file;
  bool redis_without_password = false;
  std::string gpus = "all";
  std::string prefix = "kernelrl";
  double visibility_timeout_s = 60;
  double heartbeat_s = 2;
  int max_attempts = 3;
  unsigned prefetch = 1;
  long long result_ttl_s = 7 * 86400;
  std::string work_dir;
  std::string slot;  // internal: set on the per-GPU processes a supervisor starts
  bool print_config = false;
};

struct EvalServiceArgs {
  std::string url;         // "" = the in-process engine
  std::string token_file;
};

CLI::App* add_serve_command(CLI::App& app, ServeArgs& args);
// The Redis worker; the caller adds the engine and compile options (they are each job's defaults).
CLI::App* add_worker_command(CLI::App& app, WorkerArgs& args);
// --eval-service URL and --eval-service-token-file F on `rollout` or `train`.
void add_eval_service_options(CLI::App* cmd, EvalServiceArgs& args);

// Exit codes as the CLI's: 0 ran and stopped on SIGTERM/SIGINT, 2 could not start, 64 usage.
int run_serve(const ServeArgs& args);
// `engine` is complete (worker binary, cache folder); `argv` is this command line, which the
// supervisor of several GPUs starts once per GPU.
int run_worker(const WorkerArgs& args, const eval::EngineConfig& engine, const std::vector<std::string>& argv);

// The evaluator of `rollout` and `train`: the service when args.url is set (evaluating with the
// command's options and rules), else the engine `make_engine` starts.
common::Expected<std::unique_ptr<rollout::Evaluator>> make_evaluator(
    const EvalServiceArgs& args, const eval::EngineConfig& engine,
    const std::function<common::Expected<std::unique_ptr<eval::Engine>>()>& make_engine);

}  // namespace kernelrl::cli
