#include "eval/result.hpp"

namespace kernelrl::eval {

void to_json(nlohmann::json& j, const EvalResult& r) {
  j = nlohmann::json{{"status", common::to_string(r.status)},
                     {"correct", r.correct},
                     {"runtime_us", r.runtime_us},
                     {"ref_runtime_us", r.ref_runtime_us},
                     {"speedup", r.speedup},
                     {"sol_us", r.sol_us},
                     {"sol_fraction", r.sol_fraction},
                     {"runtime", r.runtime},
                     {"ref_runtime", r.ref_runtime},
                     {"error", r.error},
                     {"phases_ms", r.phases_ms},
                     {"task", r.task},
                     {"candidate", r.candidate},
                     {"format", r.format},
                     {"rules", r.rules},
                     {"cache_hit", r.cache_hit},
                     {"device", r.device},
                     {"device_info", r.device_info},
                     {"versions", r.versions},
                     {"seeds", r.seeds},
                     {"tolerance", r.tolerance},
                     {"isolation", r.isolation},
                     {"commit", r.commit},
                     {"timestamp", r.timestamp}};
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  if (r.cpu_wait_fraction >= 0) {
    j["cpu_wait_fraction"] = r.cpu_wait_fraction;
    j["timing_unstable"] = r.timing_unstable;
  }
}

void from_json(const nlohmann::json& j, EvalResult& r) {
  auto status = common::parse_status(j.value("status", std::string("RUNTIME_ERROR")));
  r.status = status.value_or(common::Status::RUNTIME_ERROR);
  r.correct = j.value("correct", false);
  r.runtime_us = j.value("runtime_us", 0.0);
  r.ref_runtime_us = j.value("ref_runtime_us", 0.0);
  r.speedup = j.value("speedup", 0.0);
  r.sol_us = j.value("sol_us", 0.0);
  r.sol_fraction = j.value("sol_fraction", 0.0);
  r.runtime = j.value("runtime", TimingSummary{});
  r.ref_runtime = j.value("ref_runtime", TimingSummary{});
  r.cpu_wait_fraction = j.value("cpu_wait_fraction", -1.0);
  r.timing_unstable = j.value("timing_unstable", false);
  r.error = j.value("error", ErrorDetails{});
  r.phases_ms = j.value("phases_ms", std::map<std::string, double>{});
  r.task = j.value("task", "");
  r.candidate = j.value("candidate", "");
  r.format = j.value("format", "");
  r.rules = j.value("rules", "");
  r.warnings = j.value("warnings", std::vector<std::string>{});
  r.cache_hit = j.value("cache_hit", false);
  r.device = j.value("device", "");
  r.device_info = j.value("device_info", nlohmann::json::object());
  r.versions = j.value("versions", nlohmann::json::object());
  r.seeds = j.value("seeds", std::vector<std::uint64_t>{});
  r.tolerance = j.value("tolerance", nlohmann::json::object());
  r.isolation = j.value("isolation", nlohmann::json::object());
  r.commit = j.value("commit", "");
  r.timestamp = j.value("timestamp", "");
}

EvalResult make_result(common::Status status, std::string message) {
  EvalResult r;
  r.status = status;
  r.error.message = std::move(message);
  return r;
}

}  // namespace kernelrl::eval
