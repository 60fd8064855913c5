#include "service/metrics.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kernelrl::service {

namespace {

std::string format_bound(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", b);
  return buf;
}

long long field_int(const nlohmann::json& h, const std::string& key) {
  if (!h.contains(key) || !h[key].is_string()) return 0;
  return std::strtoll(h[key].get<std::string>().c_str(), nullptr, 10);
}

void histogram(std::ostringstream& out, const std::string& name, const std::string& help, const nlohmann::json& h) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " histogram\n";
  long long cumulative = 0;
  for (double b : latency_buckets_s()) {
    const std::string bound = format_bound(b);
    cumulative += field_int(h, "le:" + bound);
    out << name << "_bucket{le=\"" << bound << "\"} " << cumulative << "\n";
  }
  cumulative += field_int(h, "le:+Inf");
  out << name << "_bucket{le=\"+Inf\"} " << cumulative << "\n";
  const std::string sum = h.contains("sum") && h["sum"].is_string() ? h["sum"].get<std::string>() : "0";
  out << name << "_sum " << sum << "\n" << name << "_count " << cumulative << "\n";
}

void gauge(std::ostringstream& out, const std::string& name, const std::string& help, long long v,
           const char* type = "gauge") {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n" << name << " " << v << "\n";
}

}  // namespace

std::string render_metrics(const QueueStats& s, const HttpCounters& http) {
  std::ostringstream out;
  gauge(out, "kernelrl_queue_depth", "Jobs in the stream: queued or being evaluated.", s.depth);
  gauge(out, "kernelrl_jobs_in_flight", "Jobs handed to a worker and not yet finished.", s.in_flight);
  gauge(out, "kernelrl_jobs_queued", "Jobs no worker has taken yet.", std::max(0LL, s.depth - s.in_flight));
  gauge(out, "kernelrl_workers_alive", "Worker processes (one per GPU) with a recent heartbeat.", s.workers_alive);
  long long submitted = 0, evaluations = 0, poisoned = 0;
  std::vector<std::pair<std::string, long long>> by_status;
  for (const auto& [key, v] : s.counters) {
    if (key == "submitted") submitted = v;
    if (key == "evaluations") evaluations = v;
    if (key == "poisoned") poisoned = v;
    if (key.rfind("status:", 0) == 0) by_status.emplace_back(key.substr(7), v);
  }
  gauge(out, "kernelrl_jobs_submitted_total", "Jobs accepted (a repeated client_id is not counted again).", submitted,
        "counter");
  gauge(out, "kernelrl_evaluations_total", "Evaluations finished by workers, redelivered duplicates included.",
        evaluations, "counter");
  gauge(out, "kernelrl_jobs_poisoned_total",
        "Jobs ended as RUNTIME_ERROR because the workers holding them died max-attempts times.", poisoned, "counter");
  out << "# HELP kernelrl_jobs_finished_total Jobs with a stored result, by status.\n"
      << "# TYPE kernelrl_jobs_finished_total counter\n";
  for (const auto& [status, v] : by_status) out << "kernelrl_jobs_finished_total{status=\"" << status << "\"} " << v << "\n";
  out << "# HELP kernelrl_http_responses_total Responses of this front by status class.\n"
      << "# TYPE kernelrl_http_responses_total counter\n";
  for (std::size_t c = 1; c <= 5; ++c) {
    out << "kernelrl_http_responses_total{class=\"" << c << "xx\"} " << http.by_class[c].load() << "\n";
  }
  histogram(out, "kernelrl_evaluation_seconds", "Wall time of one evaluation on a worker (compile included).",
            s.evaluation_hist);
  histogram(out, "kernelrl_job_latency_seconds", "Time from submission to the stored result.", s.latency_hist);
  return out.str();
}

}  // namespace kernelrl::service
