// GET /metrics: the queue's state and counters (from Redis, shared by every front and worker) and
// this front's HTTP counters, in the Prometheus text format (version 0.0.4).
#pragma once

#include <array>
#include <atomic>
#include <string>

#include "service/queue.hpp"

namespace kernelrl::service {

// Responses of this front by status class. Thread-safe.
struct HttpCounters {
  std::array<std::atomic<long long>, 6> by_class{};  // index 1..5: 1xx..5xx
  std::atomic<long long> too_many{0};                // 429s (queue over its bound)
  std::atomic<long long> unauthorized{0};            // 401s
  void count(int status) {
    if (status >= 100 && status < 600) ++by_class[static_cast<std::size_t>(status / 100)];
    if (status == 429) ++too_many;
    if (status == 401) ++unauthorized;
  }
};

// The exposition text. Metric names:
//   kernelrl_queue_depth, kernelrl_jobs_in_flight, kernelrl_jobs_queued, kernelrl_workers_alive (gauges);
//   kernelrl_jobs_submitted_total, kernelrl_evaluations_total, kernelrl_jobs_poisoned_total,
//   kernelrl_jobs_finished_total{status}, kernelrl_http_responses_total{class} (counters);
//   kernelrl_evaluation_seconds, kernelrl_job_latency_seconds (histograms, latency_buckets_s()).
std::string render_metrics(const QueueStats& stats, const HttpCounters& http);

}  // namespace kernelrl::service
