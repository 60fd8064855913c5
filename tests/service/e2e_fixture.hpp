// The whole service as a deployment runs it, on this machine: a redis-server, `kernelrl serve` and
// `kernelrl worker --redis` processes (CPU slots), started once for a test binary and shared by
// its tests; each test starts again the workers an earlier one killed.
#pragma once

#include <map>
#include <regex>

#include "service_fixture.hpp"

namespace kernelrl::service::testing {

// Job options that make a host evaluation as cheap as the engine allows: one correctness trial,
// no timing, and a short correctness limit so a hanging candidate costs two seconds.
inline nlohmann::json cheap_options() {
  return {{"n_trials", 1}, {"time_kernels", false}, {"timeout_correctness_s", 2.0}};
}

// A job on the service test task with the candidate tests/service/data/<file>.
inline nlohmann::json add_job(const std::string& file, nlohmann::json options = cheap_options()) {
  return {{"task", "service/task_add.py"},
          {"candidate", read_text(source_path("tests/service/data/" + file))},
          {"candidate_name", file},
          {"options", std::move(options)}};
}

class ServiceEnv {
 public:
  static constexpr int kWorkers = 3;
  static constexpr const char* kPrefix = "e2e";

  ServiceEnv() : dir_(fs::temp_directory_path() / ("kernelrl-service-e2e-" + std::to_string(::getpid()))) {
    (void)common::remove_tree(dir_);
    fs::create_directories(dir_);
    redis_ = std::make_unique<RedisServer>(dir_ / "redis");
    EXPECT_TRUE(redis_->up()) << redis_->log();
    token_file_ = write_token_file(dir_);
    serve_ = ChildProcess({KERNELRL_BINARY, "serve", "--redis", redis_->url(), "--listen", "127.0.0.1:0", "--token-file",
                           token_file_.string(), "--tasks", "service=" + source_path("tests/service/data"), "--tasks",
                           "ladder=" + source_path("tests/ladder"), "--prefix", kPrefix, "--max-queue", "10000",
                           "--allow-task-source"},  // `kernelrl rollout/train --eval-service` send tasks as text
                          dir_ / "serve.log");
    std::smatch m;
    const std::regex listening("listening on port ([0-9]+)");
    EXPECT_TRUE(eventually(30, [&] {
      const std::string out = serve_.output();
      if (!std::regex_search(out, m, listening)) return false;
      port_ = std::stoi(m[1]);
      return true;
    })) << "kernelrl serve did not start:\n" << serve_.output();
  }
  ~ServiceEnv() {
    for (auto& w : workers_) w.stop();
    serve_.stop();
    if (!::testing::Test::HasFailure()) (void)common::remove_tree(dir_);
  }

  // Starts workers until `n` are running (the ones killed by a test are gone); waits for their heartbeats.
  void ensure_workers(int n = kWorkers) {
    std::erase_if(workers_, [](ChildProcess& w) { return !w.alive(); });
    while (static_cast<int>(workers_.size()) < n) workers_.push_back(start_worker({"--gpus", "all"}));
    EXPECT_TRUE(eventually(60, [&] { return n_alive_workers() >= n; }));
  }
  ChildProcess start_worker(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {KERNELRL_BINARY, "worker", "--redis", redis_->url(), "--prefix", kPrefix,
                                     "--device", "cpu", "--visibility-timeout-s", "2", "--heartbeat-s", "0.25",
                                     "--max-attempts", "2", "--cache-dir", (dir_ / "compile-cache").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ChildProcess(argv, dir_ / ("worker-" + std::to_string(n_started_++) + ".log"),
                        {"KERNELRL_CACHE_DIR=" + (dir_ / "cache").string()});
  }
  // Live heartbeats of workers started by this environment (a killed one drops out after 1.5 s).
  int n_alive_workers() {
    auto r = http().get("/v1/workers");
    int n = 0;
    for (const auto& w : r.body.value("workers", nlohmann::json::array())) {
      n += w.value("seconds_since_heartbeat", 99.0) < 1.5;
    }
    return n;
  }
  // The worker process whose consumer name ("host/PID/slot") is `name`; nullptr if not ours.
  ChildProcess* worker_named(const std::string& name) {
    for (auto& w : workers_) {
      if (name.find("/" + std::to_string(w.pid()) + "/") != std::string::npos) return &w;
    }
    return nullptr;
  }

  Http http() { return Http(port_, kTestToken); }
  RedisServer& redis() { return *redis_; }
  int port() const { return port_; }
  const fs::path& dir() const { return dir_; }
  const fs::path& token_file() const { return token_file_; }
  std::string serve_log() const { return serve_.output(); }
  std::string worker_logs() const {
    std::string out;
    for (int i = 0; i < n_started_; ++i) {
      out += "--- worker-" + std::to_string(i) + ".log\n" + read_text(dir_ / ("worker-" + std::to_string(i) + ".log"));
    }
    return out;
  }

  // Submits `jobs` as one batch; returns (batch, ids).
  std::pair<std::string, std::vector<std::string>> submit(const std::vector<nlohmann::json>& jobs) {
    auto r = http().post("/v1/evaluations", nlohmann::json{{"jobs", jobs}});
    EXPECT_EQ(r.status, 202) << r.text;
    if (r.status != 202) return {};
    return {r.body["batch"], r.body["ids"].get<std::vector<std::string>>()};
  }
  // Polls the batch until done or `timeout_s`; the last answer.
  nlohmann::json wait_batch(const std::string& batch, double timeout_s) {
    const auto t0 = clock_type::now();
    nlohmann::json last;
    auto h = http();
    while (seconds_since(t0) < timeout_s) {
      auto r = h.get("/v1/batches/" + batch + "?wait_s=5");
      if (r.status == 200) {
        last = r.body;
        if (last.value("done", false)) break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // 503 while Redis restarts
      }
    }
    return last;
  }
  // Counter values from /metrics, by full metric text ("kernelrl_jobs_finished_total{status=\"OK\"}").
  std::map<std::string, double> metrics() {
    std::map<std::string, double> out;
    std::istringstream lines(http().get("/metrics").text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      const auto space = line.rfind(' ');
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return out;
  }
  double finished_total() {
    double n = 0;
    for (const auto& [k, v] : metrics()) n += k.rfind("kernelrl_jobs_finished_total", 0) == 0 ? v : 0;
    return n;
  }

 private:
  fs::path dir_;
  std::unique_ptr<RedisServer> redis_;
  fs::path token_file_;
  ChildProcess serve_;
  int port_ = 0;
  std::vector<ChildProcess> workers_;
  int n_started_ = 0;
};

}  // namespace kernelrl::service::testing
