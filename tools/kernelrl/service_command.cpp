#include "service_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "common/gpu_list.hpp"
#include "exit_codes.hpp"
#include "kernelrl/build_config.hpp"
#if KERNELRL_HAVE_SERVICE
#include "service/client.hpp"
#include "service/front.hpp"
#include "service/slots.hpp"
#include "service/worker_loop.hpp"
#endif

namespace kernelrl::cli {

namespace {

constexpr int kCouldNotStart = kCouldNotEvaluate;

std::atomic<bool> g_stop{false};

void on_stop_signal(int) { g_stop = true; }

[[maybe_unused]] void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

[[maybe_unused]] int no_service(const char* command) {
  std::cerr << "kernelrl " << command << ": this build has no evaluation service; it needs hiredis and cpp-httplib "
            << "(install libhiredis-dev and libcpp-httplib-dev, e.g. scripts/setup.sh, and reconfigure)\n";
  return kCouldNotStart;
}

// The in-process engine as an evaluator that owns it.
class OwnedEngineEvaluator final : public rollout::Evaluator {
 public:
  explicit OwnedEngineEvaluator(std::unique_ptr<eval::Engine> engine) : engine_(std::move(engine)), inner_(*engine_) {}
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override { return inner_.evaluate(job); }
  std::string device() const override { return inner_.device(); }
  nlohmann::json settings() const override { return inner_.settings(); }

 private:
  std::unique_ptr<eval::Engine> engine_;
  rollout::EngineEvaluator inner_;
};

void add_redis_options(CLI::App* cmd, std::string& url, std::string& password_file, bool& without_password) {
  cmd->add_option("--redis", url, "Redis URL: redis://[:PASSWORD@]HOST[:PORT][/DB]")->required();
  cmd->add_option("--redis-password-file", password_file,
                  "file whose first line is Redis's password (its requirepass): kept out of the command line");
  cmd->add_flag("--redis-without-password", without_password,
                "connect to a Redis off this host without a password (only where nothing but the service's hosts can "
                "reach it): whoever reaches Redis writes jobs and results");
}

#if KERNELRL_HAVE_SERVICE
// The Redis a command reaches, as its configuration says it (password masked) and how it is authenticated.
nlohmann::json redis_config(const service::RedisAccess& access) {
  auto url = service::resolve_redis(access);
  if (!url) return access.url;
  return {{"url", url->text},
          {"auth", !url->password.empty() ? "password" : url->loopback() ? "none (loopback)" : "none (--redis-without-password)"}};
}
#endif

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeArgs& a) {
  auto* cmd = app.add_subcommand("serve", "the evaluation service's HTTP front, in front of Redis (docs/service.md)");
  const std::filesystem::path default_tasks = std::filesystem::path(build::source_dir) / "tasks";
  if (std::filesystem::is_directory(default_tasks)) a.task_sets = {default_tasks.string()};
  add_redis_options(cmd, a.redis_url, a.redis_password_file, a.redis_without_password);
  cmd->add_option("--listen", a.listen, "HOST:PORT to serve HTTP on (0.0.0.0:PORT for every interface)")->capture_default_str();
  cmd->add_option("--token-file", a.token_file,
                  "bearer tokens, one per line (at least 16 characters); without it every request is allowed");
  cmd->add_option("--tasks", a.task_sets, "task sets jobs may name by path: DIR (named after its folder) or NAME=DIR")
      ->capture_default_str();
  cmd->add_option("--prefix", a.prefix, "Redis key prefix (several services on one Redis)")->capture_default_str();
  cmd->add_option("--max-request-mb", a.max_request_mb, "largest request body (413 beyond)")->capture_default_str();
  cmd->add_option("--max-batch", a.max_batch_jobs, "most jobs in one request (413 beyond)")->capture_default_str();
  cmd->add_option("--max-queue", a.max_queue, "jobs queued or running at most; a submission beyond gets 429")
      ->capture_default_str();
  cmd->add_option("--retry-after-s", a.retry_after_s, "Retry-After of a 429")->capture_default_str();
  cmd->add_option("--max-wait-s", a.max_wait_s, "longest wait_s a request may ask for")->capture_default_str();
  cmd->add_option("--result-ttl-s", a.result_ttl_s, "how long batches and results are kept (workers set the results')")
      ->capture_default_str();
  cmd->add_option("--http-threads", a.http_threads, "requests served at once (a waiting request holds one)")
      ->capture_default_str();
  cmd->add_option("--worker-alive-s", a.worker_alive_s, "a worker silent this long is not counted alive")
      ->capture_default_str();
  auto* allow = cmd->add_flag("--allow-task-source", a.allow_task_source,
                              "accept tasks as text too (task_source), not only by task-set path: a task is Python the "
                              "workers run, so any token holder then runs Python on the evaluation hosts");
  cmd->add_flag("--no-task-source", a.no_task_source, "accept tasks only by task-set path (the default)")->excludes(allow);
  cmd->add_flag("--print-config", a.print_config, "print the resolved configuration as JSON and exit");
  return cmd;
}

CLI::App* add_worker_command(CLI::App& app, WorkerArgs& a) {
  auto* cmd = app.add_subcommand(
      "worker", "evaluate the service's jobs: one process per GPU pulling from Redis (docs/service.md); without --redis "
                "this is the engine's internal per-device worker");
  add_redis_options(cmd, a.redis_url, a.redis_password_file, a.redis_without_password);
  cmd->add_option("--gpus", a.gpus, "all (CUDA_VISIBLE_DEVICES if set, else every GPU; a CPU slot without one) or 0,1,...")
      ->capture_default_str();
  cmd->add_option("--prefix", a.prefix, "Redis key prefix, as serve's")->capture_default_str();
  cmd->add_option("--visibility-timeout-s", a.visibility_timeout_s,
                  "a job whose worker sent no heartbeat this long is claimed by another worker")
      ->capture_default_str();
  cmd->add_option("--heartbeat-s", a.heartbeat_s, "heartbeat period (well under the visibility timeout)")->capture_default_str();
  cmd->add_option("--max-attempts", a.max_attempts, "a job whose workers died this many times ends as RUNTIME_ERROR")
      ->capture_default_str();
  cmd->add_option("--prefetch", a.prefetch,
                  "jobs each GPU process takes beyond its free evaluations, so their compile overlaps the evaluations")
      ->capture_default_str();
  cmd->add_option("--result-ttl-s", a.result_ttl_s, "results expire this long after they are stored")->capture_default_str();
  cmd->add_option("--work-dir", a.work_dir, "folder for the jobs' task and candidate files (default: a private temp folder)");
  cmd->add_option("--slot", a.slot, "internal: the per-GPU process a supervisor starts")->group("");
  cmd->add_flag("--print-config", a.print_config, "print the resolved configuration as JSON and exit");
  return cmd;
}

void add_eval_service_options(CLI::App* cmd, EvalServiceArgs& a) {
  cmd->add_option("--eval-service", a.url,
                  "evaluate through the evaluation service at this URL (http://HOST:PORT of `kernelrl serve`) instead of "
                  "the in-process engine; the evaluation options of this command apply to each job");
  cmd->add_option("--eval-service-token-file", a.token_file, "the service's bearer token (first token line of the file)");
}

#if KERNELRL_HAVE_SERVICE

int run_serve(const ServeArgs& a) {
  service::ServeConfig c;
  c.redis = {a.redis_url, a.redis_password_file, a.redis_without_password};
  if (auto url = service::resolve_redis(c.redis); !url) {
    std::cerr << "kernelrl serve: " << url.error().message << "\n";
    return kUsageError;
  }
  c.listen = a.listen;
  c.token_file = a.token_file;
  c.task_sets = a.task_sets;
  c.prefix = a.prefix;
  if (!(a.max_request_mb > 0)) {
    std::cerr << "kernelrl serve: --max-request-mb: must be positive\n";
    return kUsageError;
  }
  c.max_request_bytes = static_cast<std::size_t>(a.max_request_mb * (1 << 20));
  c.max_batch_jobs = a.max_batch_jobs;
  c.max_queue = a.max_queue;
  c.retry_after_s = a.retry_after_s;
  c.max_wait_s = a.max_wait_s;
  c.result_ttl_s = a.result_ttl_s;
  c.http_threads = a.http_threads;
  c.worker_alive_s = a.worker_alive_s;
  c.job_limits.allow_task_source = a.allow_task_source;
  if (a.print_config) {
    std::cout << nlohmann::json{{"command", "serve"},       {"redis", redis_config(c.redis)}, {"listen", c.listen},
                                {"token_file", a.token_file}, {"tasks", c.task_sets},        {"prefix", c.prefix},
                                {"max_request_bytes", c.max_request_bytes}, {"max_batch_jobs", c.max_batch_jobs},
                                {"max_queue", c.max_queue}, {"max_wait_s", c.max_wait_s}, {"result_ttl_s", c.result_ttl_s},
                                {"http_threads", c.http_threads}, {"task_source", c.job_limits.allow_task_source}}
                     .dump(2)
              << "\n";
    return 0;
  }
  install_stop_handlers();
  auto front = service::Front::create(c);
  if (!front) {
    std::cerr << "kernelrl serve: " << front.error().message << "\n";
    return kCouldNotStart;
  }
  if (auto s = (*front)->start(); !s) {
    std::cerr << "kernelrl serve: " << s.error().message << "\n";
    return kCouldNotStart;
  }
  if (a.token_file.empty()) std::cerr << "kernelrl serve: warning: no --token-file: every request is allowed\n";
  const auto colon = c.listen.rfind(':');
  std::cerr << "kernelrl serve: listening on " << c.listen.substr(0, colon) << ":" << (*front)->port() << ", queue "
            << redis_config(c.redis)["url"].get<std::string>() << " (prefix " << c.prefix << ")" << std::endl;
  std::cout << "listening on port " << (*front)->port() << std::endl;  // scripts and tests read the port here
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::cerr << "kernelrl serve: stopping" << std::endl;
  (*front)->stop();
  return 0;
}

int run_worker(const WorkerArgs& a, const eval::EngineConfig& engine, const std::vector<std::string>& argv) {
  service::SlotConfig c;
  c.redis = {a.redis_url, a.redis_password_file, a.redis_without_password};
  c.prefix = a.prefix;
  c.engine = engine;
  c.visibility_timeout_s = a.visibility_timeout_s;
  c.heartbeat_s = a.heartbeat_s;
  c.max_attempts = a.max_attempts;
  c.prefetch = a.prefetch;
  c.result_ttl_s = a.result_ttl_s;
  c.work_dir = a.work_dir;
  if (!(a.heartbeat_s > 0) || !(a.visibility_timeout_s >= 2 * a.heartbeat_s) || a.max_attempts < 1) {
    std::cerr << "kernelrl worker: --heartbeat-s must be positive and at most half of --visibility-timeout-s, and "
                 "--max-attempts at least 1\n";
    return kUsageError;
  }
  if (auto url = service::resolve_redis(c.redis); !url) {
    std::cerr << "kernelrl worker: " << url.error().message << "\n";
    return kUsageError;
  }
  auto gpus = a.slot.empty() ? common::resolve_gpus(a.gpus) : std::vector<std::string>{};
  if (!gpus) {
    std::cerr << "kernelrl worker: " << gpus.error().message << "\n";
    return kUsageError;
  }
  if (a.print_config) {
    std::cout << nlohmann::json{{"command", "worker"}, {"redis", redis_config(c.redis)}, {"prefix", c.prefix}, {"gpus", *gpus},
                                {"visibility_timeout_s", c.visibility_timeout_s}, {"heartbeat_s", c.heartbeat_s},
                                {"max_attempts", c.max_attempts}, {"prefetch", c.prefetch}, {"result_ttl_s", c.result_ttl_s},
                                {"evaluations_per_slot", engine.n_workers}, {"options", engine.options}}
                     .dump(2)
              << "\n";
    return 0;
  }
  install_stop_handlers();
  if (!a.slot.empty()) {  // one of a supervisor's per-GPU processes (CUDA_VISIBLE_DEVICES already set)
    c.slot = a.slot;
    return service::run_slot(c, g_stop);
  }
  if (gpus->size() > 1) return service::supervise_slots(argv, *gpus, g_stop);
  if (gpus->size() == 1) {
    ::setenv("CUDA_VISIBLE_DEVICES", (*gpus)[0].c_str(), 1);  // the engine's processes inherit it
    c.slot = "gpu" + (*gpus)[0];
  } else {
    c.slot = "cpu";
  }
  return service::run_slot(c, g_stop);
}

common::Expected<std::unique_ptr<rollout::Evaluator>> make_evaluator(
    const EvalServiceArgs& args, const eval::EngineConfig& engine,
    const std::function<common::Expected<std::unique_ptr<eval::Engine>>()>& make_engine) {
  if (!args.url.empty()) {
    service::ServiceClientConfig client;
    client.base_url = args.url;
    if (!args.token_file.empty()) {
      auto token = service::read_client_token(args.token_file);
      if (!token) return token.error();
      client.token = *token;
    }
    auto e = service::ServiceEvaluator::create(client, engine.options, engine.rules);
    if (!e) return e.error();
    return std::unique_ptr<rollout::Evaluator>(std::move(*e));
  }
  auto e = make_engine();
  if (!e) return common::make_error("could not start the engine: " + e.error().message);
  return std::unique_ptr<rollout::Evaluator>(std::make_unique<OwnedEngineEvaluator>(std::move(*e)));
}

#else

int run_serve(const ServeArgs&) { return no_service("serve"); }

int run_worker(const WorkerArgs&, const eval::EngineConfig&, const std::vector<std::string>&) {
  return no_service("worker --redis");
}

common::Expected<std::unique_ptr<rollout::Evaluator>> make_evaluator(
    const EvalServiceArgs& args, const eval::EngineConfig&,
    const std::function<common::Expected<std::unique_ptr<eval::Engine>>()>& make_engine) {
  if (!args.url.empty()) {
    return common::make_error("--eval-service: this build has no evaluation service client (needs hiredis and "
                              "cpp-httplib: install libhiredis-dev and libcpp-httplib-dev and reconfigure)");
  }
  auto e = make_engine();
  if (!e) return common::make_error("could not start the engine: " + e.error().message);
  return std::unique_ptr<rollout::Evaluator>(std::make_unique<OwnedEngineEvaluator>(std::move(*e)));
}

#endif

}  // namespace kernelrl::cli
