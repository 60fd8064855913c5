// What the evaluation service costs on top of the engine, measured in one run on this machine (CPU):
//   1. the same host jobs evaluated directly (eval::Engine::evaluate_batch, what `kernelrl eval
//      --batch` runs; one evaluation at a time) and through the service (HTTP submit of one
//      batch, Redis, one `kernelrl worker --redis`, batch wait), the two alternating, each repeated;
//      the difference per job is the service's overhead, also as a fraction of a job's time;
//   2. throughput through the service with 1, 2 and 4 workers (jobs/s).
// Engines and workers are warmed (torch imported, candidate compiled, reference timed) before any
// timed run. A redis-server and `kernelrl serve` are started on free loopback ports.
// usage: kernelrl_service_bench [--jobs N] [--repeats R] [--profile cheap|timed] [--workers 1,2,4]
//                               [--prefetch N (the workers' --prefetch, default 1)]
// Profiles: cheap (1 correctness trial, no timing: the overhead shows most) and timed (5 trials,
// timing with a 100 ms budget: closer to RL use). Defaults: 60 jobs, 3 repeats, cheap.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench_util.hpp"
#include "common/fs.hpp"
#include "common/provenance.hpp"
#include "common/table.hpp"
#include "eval/engine.hpp"
#include "eval/stats.hpp"
#include "service_processes.hpp"

using namespace kernelrl;
using namespace kernelrl::service::testing;
using bench::fmt;

namespace {

nlohmann::json profile_options(const std::string& profile) {
  if (profile == "timed") {
    return {{"n_trials", 5}, {"time_kernels", true}, {"n_warmup", 5}, {"min_reps", 10}, {"max_reps", 100},
            {"timing_budget_ms", 100}};
  }
  return {{"n_trials", 1}, {"time_kernels", false}};
}

struct Service {
  fs::path dir;
  std::unique_ptr<RedisServer> redis;
  ChildProcess serve;
  int port = 0;
  std::vector<ChildProcess> workers;

  explicit Service(fs::path d) : dir(std::move(d)) {
    redis = std::make_unique<RedisServer>(dir / "redis");
    if (!redis->up()) throw std::runtime_error("redis-server did not start: " + redis->log());
    serve = ChildProcess({KERNELRL_BINARY, "serve", "--redis", redis->url(), "--listen", "127.0.0.1:0", "--tasks",
                          "service=" + source_path("tests/service/data"), "--prefix", "bench"},
                         dir / "serve.log");
    std::smatch m;
    const std::regex listening("listening on port ([0-9]+)");
    if (!eventually(30, [&] {
          const std::string out = serve.output();
          return std::regex_search(out, m, listening);
        })) {
      throw std::runtime_error("kernelrl serve did not start: " + serve.output());
    }
    port = std::stoi(m[1]);
  }
  std::string prefetch = "1";
  void add_worker() {
    workers.emplace_back(std::vector<std::string>{KERNELRL_BINARY, "worker", "--redis", redis->url(), "--prefix", "bench",
                                                  "--device", "cpu", "--cache-dir", (dir / "compile").string(),
                                                  "--prefetch", prefetch},
                         dir / ("worker-" + std::to_string(workers.size()) + ".log"),
                         std::vector<std::string>{"KERNELRL_CACHE_DIR=" + (dir / "cache").string()});
  }
  // Submits n jobs in one request and waits for the batch; wall seconds from submit to results.
  double run_batch(const std::vector<nlohmann::json>& jobs) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(std::chrono::seconds(120));
    const auto t0 = clock_type::now();
    auto posted = client.Post("/v1/evaluations", nlohmann::json{{"jobs", jobs}}.dump(), "application/json");
    if (!posted || posted->status != 202) throw std::runtime_error("submit failed: " + (posted ? posted->body : "no answer"));
    const std::string batch = nlohmann::json::parse(posted->body)["batch"];
    while (true) {
      auto r = client.Get("/v1/batches/" + batch + "?wait_s=30");
      if (!r || r->status != 200) throw std::runtime_error("wait failed");
      auto j = nlohmann::json::parse(r->body);
      if (j["done"].get<bool>()) {
        for (const auto& v : j["jobs"]) {
          if (v["result"].value("status", "") != "OK") throw std::runtime_error("a job failed: " + v.dump().substr(0, 500));
        }
        return std::chrono::duration<double>(clock_type::now() - t0).count();
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  int n_jobs = 60, repeats = 3;
  std::string profile = "cheap", prefetch = "1";
  std::vector<int> worker_counts = {1, 2, 4};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--jobs") n_jobs = std::stoi(value);
    if (flag == "--repeats") repeats = std::stoi(value);
    if (flag == "--profile") profile = value;
    if (flag == "--prefetch") prefetch = value;
    if (flag == "--workers") {
      worker_counts.clear();
      for (std::size_t p = 0; p < value.size();) {
        worker_counts.push_back(std::stoi(value.substr(p)));
        p = value.find(',', p);
        if (p == std::string::npos) break;
        ++p;
      }
    }
  }
  const nlohmann::json options = profile_options(profile);
  const std::string task_text = source_path("tests/service/data/task_add.py");
  const std::string candidate = source_path("tests/service/data/add_ok.cpp");
  auto dir = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-service-bench-");
  if (!dir) {
    std::cerr << dir.error().message << "\n";
    return 2;
  }

  // 1a. Direct: the engine in this process, one evaluation at a time, the job's options.
  eval::EngineConfig config;
  config.worker_binary = KERNELRL_BINARY;
  config.cache_dir = *dir / "compile";
  config.options.device = "cpu";
  config.n_workers = 1;
  auto engine = eval::Engine::create(config);
  if (!engine) {
    std::cerr << engine.error().message << "\n";
    return 2;
  }
  nlohmann::json merged = eval::EvalOptions{};
  merged.update(options);
  eval::EvalJob job{task_text, candidate, common::Format::HOST, std::nullopt, std::nullopt, merged.get<eval::EvalOptions>()};
  const std::vector<eval::EvalJob> warm(2, job), timed(static_cast<std::size_t>(n_jobs), job);
  (void)(*engine)->evaluate_batch(warm);
  std::vector<double> direct_s, eval_ms;
  auto run_direct = [&]() -> bool {
    const auto t0 = clock_type::now();
    auto results = (*engine)->evaluate_batch(timed);
    direct_s.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    for (const auto& res : results) {
      if (!res || res->status != common::Status::OK) return false;
      eval_ms.push_back(res->phases_ms.count("child_total") ? res->phases_ms.at("child_total") : 0.0);
    }
    return true;
  };

  // 1b. Through the service with one worker, alternating with the direct runs (so a drift of the
  // machine reaches both alike); 2. then with more workers.
  Service service(*dir / "service");
  service.prefetch = prefetch;
  const std::vector<nlohmann::json> jobs(static_cast<std::size_t>(n_jobs),
                                         {{"task", "service/task_add.py"}, {"candidate", common::read_file(candidate).value()},
                                          {"candidate_name", "add_ok.cpp"}, {"options", options}});
  auto warm_workers = [&](int n_workers) {
    while (static_cast<int>(service.workers.size()) < n_workers) service.add_worker();
    (void)service.run_batch(std::vector<nlohmann::json>(static_cast<std::size_t>(2 * n_workers), jobs[0]));
  };
  std::vector<std::pair<int, std::vector<double>>> service_s;
  warm_workers(1);
  std::vector<double> one_worker;
  for (int r = 0; r < repeats; ++r) {
    const bool direct_first = r % 2 == 0;
    if (direct_first && !run_direct()) return 2;
    one_worker.push_back(service.run_batch(jobs));
    if (!direct_first && !run_direct()) return 2;
  }
  engine->reset();
  for (int n_workers : worker_counts) {
    if (n_workers == 1) {
      service_s.emplace_back(1, one_worker);
      continue;
    }
    warm_workers(n_workers);
    std::vector<double> walls;
    for (int r = 0; r < repeats; ++r) walls.push_back(service.run_batch(jobs));
    service_s.emplace_back(n_workers, walls);
  }

  const auto direct = eval::summarize(direct_s);
  const auto per_eval = eval::summarize(eval_ms);
  std::cout << "service bench: " << n_jobs << " host jobs (tests/service/data/task_add.py, add_ok.cpp), profile " << profile
            << ", worker --prefetch " << prefetch
            << ", median of " << repeats << " runs; commit " << common::project_commit() << "\n"
            << "an evaluating process's wall time (phases_ms.child_total, direct): median " << fmt(per_eval.median, 1)
            << " ms (p10 "
            << fmt(per_eval.p10, 1) << ", p90 " << fmt(per_eval.p90, 1) << ")\n";
  common::Table table({"path", "workers", "wall s (median)", "min..max s", "ms/job", "jobs/s", "overhead ms/job", "overhead %"});
  table.add_row({"direct (Engine::evaluate_batch)", "1", fmt(direct.median, 2), fmt(direct.min, 2) + ".." + fmt(direct.max, 2),
                 fmt(1000 * direct.median / n_jobs, 1), fmt(n_jobs / direct.median, 1), "", ""});
  for (const auto& [n_workers, walls] : service_s) {
    const auto s = eval::summarize(walls);
    const bool comparable = n_workers == 1;
    const double overhead_ms = 1000 * (s.median - direct.median) / n_jobs;
    table.add_row({"service (HTTP + Redis + worker)", std::to_string(n_workers), fmt(s.median, 2),
                   fmt(s.min, 2) + ".." + fmt(s.max, 2), fmt(1000 * s.median / n_jobs, 1), fmt(n_jobs / s.median, 1),
                   comparable ? fmt(overhead_ms, 2) : "",
                   comparable ? fmt(100 * overhead_ms / (1000 * direct.median / n_jobs), 1) : ""});
  }
  std::cout << table.render();
  service.workers.clear();
  (void)common::remove_tree(*dir);
  return 0;
}
