#include "service/worker_loop.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "common/fs.hpp"
#include "common/hash.hpp"
#include "service/job_runner.hpp"
#include "service/queue.hpp"

namespace kernelrl::service {

namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// Doubling waits while Redis is away: 0.1 s up to 5 s; cut short when `stop` (if given) is set.
struct Backoff {
  double wait_s = 0.1;
  void sleep(const std::atomic<bool>* stop = nullptr) {
    const auto until =
        clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(wait_s));
    while (clock_type::now() < until && !(stop && *stop)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    wait_s = std::min(wait_s * 2, 5.0);
  }
  void reset() { wait_s = 0.1; }
};

class Slot {
 public:
  Slot(const SlotConfig& config, const std::atomic<bool>& stop, RedisUrl url, eval::Engine& engine, fs::path work_dir)
      : config_(config), stop_(stop), url_(std::move(url)), queue_(config.prefix), engine_(engine),
        files_(std::move(work_dir)),
        consumer_(host_name() + "/" + std::to_string(::getpid()) + "/" + config.slot) {}

  void consume();    // one consumer thread
  void heartbeat();  // the heartbeat thread
  void log(const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    std::cerr << "kernelrl worker " << consumer_ << ": " << line << std::endl;
  }
  const std::string& consumer() const { return consumer_; }

 private:
  // A connection with the group in place, retrying until it works or the slot stops.
  std::unique_ptr<RedisConnection> connect(double reply_timeout_s);
  void handle(std::unique_ptr<RedisConnection>& c, const Delivery& d);
  // Runs `step` on a working connection until it succeeds; false only when stopping gave up.
  template <class Step>
  bool retrying(std::unique_ptr<RedisConnection>& c, const char* what, Step step);
  nlohmann::json info();

  const SlotConfig& config_;
  const std::atomic<bool>& stop_;
  RedisUrl url_;
  JobQueue queue_;
  eval::Engine& engine_;
  JobFiles files_;
  std::string consumer_;
  std::mutex mutex_;
  std::set<std::string> in_flight_;  // stream entries being evaluated here
  std::set<std::string> jobs_;       // their job ids, for the heartbeat's info
  std::atomic<long long> n_done_{0};
  std::atomic<long long> last_claim_ms_{0};
  std::mutex log_mutex_;
  std::atomic<bool> redis_away_{false};
  const clock_type::time_point started_ = clock_type::now();
};

std::unique_ptr<RedisConnection> Slot::connect(double reply_timeout_s) {
  Backoff backoff;
  while (!stop_) {
    auto c = RedisConnection::connect(url_, 5);
    if (c) {
      (*c)->set_timeout(reply_timeout_s);
      if (auto g = queue_.ensure_group(**c); g) {
        if (redis_away_.exchange(false)) log("Redis is back");
        return std::move(*c);
      } else if (!redis_away_.exchange(true)) {
        log("cannot use the queue, retrying: " + g.error().message);
      }
    } else if (!redis_away_.exchange(true)) {
      log("Redis unreachable, retrying: " + c.error().message);
    }
    backoff.sleep(&stop_);
  }
  return nullptr;
}

template <class Step>
bool Slot::retrying(std::unique_ptr<RedisConnection>& c, const char* what, Step step) {
  Backoff backoff;
  std::optional<clock_type::time_point> stopping_since;
  while (true) {
    if (stop_ && !stopping_since) stopping_since = clock_type::now();
    if (stopping_since && common::seconds_since(*stopping_since) > 30) return false;  // Redis stayed away
    if (!c) {
      auto fresh = RedisConnection::connect(url_, 5);
      if (fresh) {
        c = std::move(*fresh);
        c->set_timeout(10);
      }
    }
    if (c) {
      auto r = step(*c);
      if (r) {
        if (redis_away_.exchange(false)) log("Redis is back");
        return true;
      }
      if (!redis_away_.exchange(true)) log(std::string(what) + " failed, retrying: " + r.error().message);
      c.reset();
    }
    backoff.sleep();
  }
}

nlohmann::json Slot::info() {
  std::lock_guard<std::mutex> lock(mutex_);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return {{"host", host_name()},
          {"pid", ::getpid()},
          {"slot", config_.slot},
          {"cuda_visible_devices", visible ? visible : ""},
          {"device", engine_.device()},
          {"evaluators", engine_.n_workers()},
          {"jobs_done", n_done_.load()},
          {"jobs", std::vector<std::string>(jobs_.begin(), jobs_.end())},
          {"uptime_s", common::seconds_since(started_)}};
}

void Slot::heartbeat() {
  std::unique_ptr<RedisConnection> c;
  while (true) {
    if (!c) {
      auto fresh = RedisConnection::connect(url_, 5);
      if (fresh) c = std::move(*fresh);
    }
    if (c) {
      std::vector<std::string> held;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        held.assign(in_flight_.begin(), in_flight_.end());
      }
      auto beat = queue_.heartbeat(*c, consumer_, info());
      auto touched = beat ? queue_.touch(*c, consumer_, held) : beat;
      if (!touched) {
        if (!redis_away_.exchange(true)) log("heartbeat failed, retrying: " + touched.error().message);
        c.reset();
      }
    }
    if (stop_) break;
    const auto next = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                              std::chrono::duration<double>(config_.heartbeat_s));
    while (!stop_ && clock_type::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (c) (void)queue_.leave(*c, consumer_);
}

void Slot::consume() {
  const long long visibility_ms = static_cast<long long>(config_.visibility_timeout_s * 1000);
  const long block_ms = static_cast<long>(std::clamp<long long>(visibility_ms / 2, 50, 1000));
  std::unique_ptr<RedisConnection> c;
  Backoff backoff;
  while (!stop_) {
    if (!c) c = connect(block_ms / 1000.0 + 10);
    if (!c) break;
    // Stale entries first (their holder is presumed dead), at most every quarter visibility timeout
    // per slot; then new ones.
    const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now().time_since_epoch()).count();
    long long last = last_claim_ms_.load();
    const bool claim =
        now_ms - last >= std::max(50LL, visibility_ms / 4) && last_claim_ms_.compare_exchange_strong(last, now_ms);
    auto d = claim ? queue_.claim_stale(*c, consumer_, visibility_ms) : std::optional<Delivery>{};
    if (d && *d) {
      log("claimed job " + (*d)->job_id + " from " + (*d)->previous_owner + " (delivery " +
          std::to_string((*d)->deliveries) + ")");
    }
    if (d && !*d) d = queue_.read_next(*c, consumer_, block_ms);
    if (!d) {
      if (!redis_away_.exchange(true)) log("taking a job failed, retrying: " + d.error().message);
      c.reset();
      backoff.sleep(&stop_);
      continue;
    }
    backoff.reset();
    if (*d) handle(c, **d);
  }
}

void Slot::handle(std::unique_ptr<RedisConnection>& c, const Delivery& d) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.insert(d.entry_id);
    jobs_.insert(d.job_id);
  }
  JobQueue::Stored stored{&d, "", "", 0, false, consumer_, config_.result_ttl_s};
  std::optional<nlohmann::json> spec_json;
  bool started = true;
  if (d.deliveries > config_.max_attempts) {
    // Every earlier holder died with it: end it instead of killing workers forever.
    eval::EvalResult r = eval::make_result(
        common::Status::RUNTIME_ERROR,
        "the job was handed to " + std::to_string(d.deliveries - 1) + " worker processes and each died before storing a "
        "result (the last: " + d.previous_owner + "); it is not evaluated again (worker --max-attempts " +
        std::to_string(config_.max_attempts) + ")");
    nlohmann::json record = r;
    started = retrying(c, "reading the job", [&](RedisConnection& rc) -> common::Fallible {
      auto s = queue_.peek(rc, d.job_id);
      if (!s) return s.error();
      spec_json = *s;
      return common::Ok{};
    });
    if (spec_json) {
      record["task"] = spec_json->value("task_name", "");
      record["candidate"] = spec_json->value("candidate_name", "");
    }
    stored.result_json = record.dump();
    stored.status = "RUNTIME_ERROR";
    stored.poisoned = true;
    log("job " + d.job_id + " ends as RUNTIME_ERROR after " + std::to_string(d.deliveries - 1) + " dead holders");
  } else {
    started = retrying(c, "starting the job", [&](RedisConnection& rc) -> common::Fallible {
      auto s = queue_.start(rc, d.job_id, consumer_);
      if (!s) return s.error();
      spec_json = *s;
      return common::Ok{};
    });
    if (started && spec_json) {  // (no spec: gone or already done; storing below only acknowledges)
      const auto t0 = clock_type::now();
      auto record = evaluate_job(engine_, files_, d.job_id, *spec_json);
      stored.evaluation_s = common::seconds_since(t0);
      stored.status = record.contains("could_not_evaluate") ? "could_not_evaluate" : record.value("status", "");
      stored.result_json = record.dump();
    }
  }
  if (started) {
    bool done = retrying(c, "storing the result", [&](RedisConnection& rc) -> common::Fallible {
      auto s = queue_.store_result(rc, stored);
      if (!s) return s.error();
      return common::Ok{};
    });
    if (!done) log("stopping with job " + d.job_id + " unstored: another worker will evaluate it again");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.erase(d.entry_id);
  jobs_.erase(d.job_id);
  ++n_done_;
}

}  // namespace

int run_slot(const SlotConfig& config, const std::atomic<bool>& stop) {
  auto url = resolve_redis(config.redis);
  if (!url) {
    std::cerr << "kernelrl worker: " << url.error().message << "\n";
    return 64;
  }
  fs::path work_dir = config.work_dir;
  bool own_work_dir = false;
  if (work_dir.empty()) {
    auto tmp = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-worker-");
    if (!tmp) {
      std::cerr << "kernelrl worker: " << tmp.error().message << "\n";
      return 2;
    }
    work_dir = *tmp;
    own_work_dir = true;
  }
  eval::EngineConfig engine_config = config.engine;
  engine_config.untrusted_task_folders.push_back(JobFiles::untrusted_task_folder(work_dir));
  auto engine = eval::Engine::create(engine_config);
  if (!engine) {
    std::cerr << "kernelrl worker: could not start the engine: " << engine.error().message << "\n";
    return 2;
  }
  Slot slot(config, stop, *url, **engine, work_dir);
  slot.log("evaluating on " + (*engine)->device() + " with " + std::to_string((*engine)->n_workers()) +
           " evaluations at once; queue " + url->text + " (prefix " + config.prefix + ")");
  std::thread beat([&] { slot.heartbeat(); });
  std::vector<std::thread> consumers;
  for (unsigned i = 0; i < (*engine)->n_workers() + config.prefetch; ++i) consumers.emplace_back([&] { slot.consume(); });
  for (auto& t : consumers) t.join();
  beat.join();
  slot.log("stopped");
  if (own_work_dir) (void)common::remove_tree(work_dir);
  return 0;
}

}  // namespace kernelrl::service
