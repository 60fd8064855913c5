#include "eval/engine_set.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace kernelrl::eval {

namespace {

struct Finished {
  std::size_t job = 0;
  std::size_t engine = 0;
  common::Expected<EvalResult> result;
};

// What the engines' threads hand to the calling thread.
class FinishedQueue {
 public:
  void push(Finished f) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(std::move(f));
    }
    ready_.notify_one();
  }
  Finished pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty(); });
    Finished f = std::move(items_.front());
    items_.pop_front();
    return f;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Finished> items_;
};

common::Expected<EvalResult> evaluate_caught(Engine& engine, const EvalJob& job) {
  try {
    return engine.evaluate(job);
  } catch (const std::exception& e) {
    return common::make_error(std::string("unexpected error: ") + e.what());
  }
}

}  // namespace

std::vector<common::Expected<EvalResult>> evaluate_spread(const std::vector<Engine*>& engines,
                                                          const std::vector<EvalJob>& jobs, const SpreadDone& on_done) {
  if (engines.empty()) {
    return std::vector<common::Expected<EvalResult>>(jobs.size(), common::make_error("no engine to evaluate on"));
  }
  if (engines.size() == 1) {
    return engines[0]->evaluate_batch(jobs, [&](std::size_t i, const common::Expected<EvalResult>& r) {
      if (on_done) on_done(i, 0, r);
    });
  }
  std::vector<std::optional<common::Expected<EvalResult>>> results(jobs.size());
  std::atomic<std::size_t> next{0};
  FinishedQueue finished;
  std::vector<std::jthread> threads;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    const unsigned n_threads = 2 * std::max(1u, engines[e]->n_workers());
    for (unsigned t = 0; t < n_threads; ++t) {
      threads.emplace_back([&, e] {
        for (std::size_t i = next++; i < jobs.size(); i = next++) {
          finished.push(Finished{i, e, evaluate_caught(*engines[e], jobs[i])});
        }
      });
    }
  }
  for (std::size_t n = 0; n < jobs.size(); ++n) {
    Finished f = finished.pop();
    if (on_done) on_done(f.job, f.engine, f.result);
    results[f.job] = std::move(f.result);
  }
  threads.clear();  // joined: every thread found no job left
  std::vector<common::Expected<EvalResult>> ordered;
  ordered.reserve(jobs.size());
  for (auto& r : results) ordered.push_back(std::move(*r));
  return ordered;
}

}  // namespace kernelrl::eval
