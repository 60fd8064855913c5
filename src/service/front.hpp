// `kernelrl serve`: the HTTP front of the evaluation service (cpp-httplib). It validates and
// enqueues jobs in Redis (service/queue.hpp) and hands results back; it evaluates nothing and keeps
// no state of its own, so several fronts may serve one Redis.
//
//   POST /v1/evaluations            one job, or {"jobs": [...]}: 202 {"id"} / {"batch", "ids"}
//   GET  /v1/evaluations/{id}       ?wait_s=S: {"id", "state", "attempts", "result"?, ...}
//   GET  /v1/batches/{id}           ?wait_s=S: {"batch", "n_jobs", "n_done", "done", "jobs": [...] in order}
//   GET  /v1/tasks                  the task sets a job may name by path
//   GET  /v1/workers                workers with their last heartbeat
//   GET  /healthz                   200 when Redis answers (no token needed), else 503
//   GET  /metrics                   Prometheus text (service/metrics.hpp)
// Errors are {"error": {"status", "message"}}, the message naming the field at fault; 401 without
// a valid bearer token, 413 over the size limits, 429 (with Retry-After) when the queue is over its
// bound, 503 (with Retry-After) while Redis cannot be reached.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/expected.hpp"
#include "service/auth.hpp"
#include "service/job_spec.hpp"
#include "service/metrics.hpp"
#include "service/queue.hpp"
#include "service/redis.hpp"
#include "service/task_sets.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace kernelrl::service {

struct ServeConfig {
  RedisAccess redis;                      // URL, password file, whether none may be needed
  std::string listen = "127.0.0.1:8080";  // HOST:PORT; port 0 picks a free one (tests)
  std::filesystem::path token_file;       // empty: no authentication (a warning says so)
  std::vector<std::string> task_sets;     // --tasks DIR or NAME=DIR
  std::string prefix = "kernelrl";        // Redis key prefix (several services on one Redis)
  std::size_t max_request_bytes = 64u << 20;  // HTTP body limit (413 beyond)
  std::size_t max_batch_jobs = 10000;     // jobs in one POST (413 beyond)
  long long max_queue = 100000;           // jobs queued or running; a POST beyond it gets 429
  int retry_after_s = 5;                  // Retry-After of a 429
  double max_wait_s = 60;                 // longest wait_s a request may ask for
  long long result_ttl_s = 7 * 86400;     // results (and idempotency keys) live this long after done
  int http_threads = 64;                  // requests served at once (each waiting request holds one)
  double worker_alive_s = 30;             // a worker whose last heartbeat is older is not counted alive
  JobLimits job_limits;
};

class Front {
 public:
  // Reads the token file and task sets and checks that Redis answers; Errors name the option.
  static common::Expected<std::unique_ptr<Front>> create(ServeConfig config);
  ~Front();

  // Binds the listening address (an Error names it) and serves on background threads until stop().
  common::Fallible start();
  int port() const { return port_; }
  void stop();  // waits for requests in progress (a waiting request returns what it has)
  const ServeConfig& config() const { return config_; }

 private:
  Front(ServeConfig config, RedisUrl url);
  void install_routes();
  // The one boundary for exceptions and authentication: every route goes through it.
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  Handler guarded(bool needs_token, Handler handler);

  void post_evaluations(const httplib::Request& req, httplib::Response& res);
  void get_evaluation(const httplib::Request& req, httplib::Response& res);
  void get_batch(const httplib::Request& req, httplib::Response& res);
  void get_tasks(httplib::Response& res);
  void get_workers(httplib::Response& res);
  void get_health(httplib::Response& res);
  void get_metrics(httplib::Response& res);

  // Waits until `done()` or `wait_s` passed, re-checking whenever a result is announced (and at
  // least every 250 ms, in case an announcement was missed).
  void wait_for(double wait_s, const std::function<bool()>& done);
  // A waiting GET's wait_s (query) and id (path); false when an error answer was sent.
  bool wait_request(const httplib::Request& req, httplib::Response& res, const std::string& kind, double& wait_s);
  // Fetches until it fails, finds nothing, `done(value)` holds or wait_s passed; the last fetch.
  template <class T, class Fetch, class Done>
  common::Expected<std::optional<T>> poll(double wait_s, Fetch fetch, Done done);
  // The worker list, or nullopt when a 503 was sent.
  std::optional<nlohmann::json> workers_or_503(httplib::Response& res);
  void listen_for_results();  // the subscriber thread

  ServeConfig config_;
  RedisUrl url_;
  TokenAuth auth_ = TokenAuth::open();
  TaskSets task_sets_;
  JobQueue queue_;
  RedisPool pool_;
  HttpCounters http_;
  std::unique_ptr<httplib::Server> server_;
  std::thread server_thread_, subscriber_thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  std::uint64_t done_generation_ = 0;  // bumped for each announced result
};

}  // namespace kernelrl::service
