#include "service/client.hpp"

#include <httplib.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "common/fs.hpp"
#include "service/job_spec.hpp"
#include "service/queue.hpp"
#include "task/manifest.hpp"

namespace kernelrl::service {

namespace {

using clock_type = std::chrono::steady_clock;

std::string excerpt(const std::string& body) { return body.size() > 400 ? body.substr(0, 400) + "..." : body; }

// The message of a service error body, or the body itself.
std::string error_message(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message")) {
    return j["error"]["message"].get<std::string>();
  }
  return excerpt(body);
}

bool retryable(int status) { return status == 429 || status == 502 || status == 503 || status == 504; }

}  // namespace

common::Expected<std::unique_ptr<ServiceClient>> ServiceClient::create(ServiceClientConfig config) {
  const std::string& url = config.base_url;
  if (url.rfind("http://", 0) != 0 || url.size() <= 7) {
    return common::make_error("--eval-service: '" + url + "' is not http://HOST:PORT (the address of `kernelrl serve`)");
  }
  while (!config.base_url.empty() && config.base_url.back() == '/') config.base_url.pop_back();
  return std::unique_ptr<ServiceClient>(new ServiceClient(std::move(config)));
}

common::Expected<nlohmann::json> ServiceClient::request(const std::string& method, const std::string& path,
                                                        const std::string& body, double timeout_s) {
  httplib::Headers headers;
  if (!config_.token.empty()) headers.emplace("Authorization", "Bearer " + config_.token);
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::duration<double>(timeout_s));
  std::optional<clock_type::time_point> failing_since;
  double backoff_s = 0.2;
  std::string last_error;
  while (true) {
    httplib::Client client(config_.base_url);
    client.set_connection_timeout(std::chrono::seconds(10));
    client.set_read_timeout(timeout);
    client.set_write_timeout(timeout);
    auto res = method == "GET" ? client.Get(path, headers) : client.Post(path, headers, body, "application/json");
    double wait_s = backoff_s;
    if (!res) {
      last_error = "no response (" + httplib::to_string(res.error()) + ")";
    } else if (res->status >= 200 && res->status < 300) {
      auto j = nlohmann::json::parse(res->body, nullptr, false);
      if (j.is_discarded()) {
        return common::make_error(config_.base_url + path + ": the answer is not JSON: " + excerpt(res->body));
      }
      return j;
    } else if (!retryable(res->status)) {
      return common::make_error(config_.base_url + path + ": HTTP " + std::to_string(res->status) + ": " +
                                error_message(res->body));
    } else {
      last_error = "HTTP " + std::to_string(res->status) + ": " + error_message(res->body);
      if (res->has_header("Retry-After")) wait_s = std::max(wait_s, std::atof(res->get_header_value("Retry-After").c_str()));
    }
    if (!failing_since) failing_since = clock_type::now();
    if (std::chrono::duration<double>(clock_type::now() - *failing_since).count() + wait_s > config_.retry_for_s) {
      return common::make_error(config_.base_url + path + ": gave up after failing for " +
                                std::to_string(static_cast<int>(config_.retry_for_s)) + " s; last: " + last_error);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
    backoff_s = std::min(backoff_s * 2, 5.0);
  }
}

common::Expected<std::string> ServiceClient::submit(nlohmann::json job) {
  if (!job.contains("client_id")) job["client_id"] = random_id("c-");  // a retried POST is then idempotent
  auto r = request("POST", "/v1/evaluations", job.dump(), config_.request_timeout_s);
  if (!r) return r.error();
  if (!r->contains("id") || !(*r)["id"].is_string()) {
    return common::make_error(config_.base_url + ": submission answer without an id");
  }
  return (*r)["id"].get<std::string>();
}

common::Expected<SubmittedBatch> ServiceClient::submit_batch(std::vector<nlohmann::json> jobs) {
  for (auto& job : jobs) {
    if (!job.contains("client_id")) job["client_id"] = random_id("c-");
  }
  auto r = request("POST", "/v1/evaluations", nlohmann::json{{"jobs", jobs}}.dump(), config_.request_timeout_s);
  if (!r) return r.error();
  if (!r->contains("batch") || !r->contains("ids")) return common::make_error(config_.base_url + ": batch answer without ids");
  return SubmittedBatch{(*r)["batch"].get<std::string>(), (*r)["ids"].get<std::vector<std::string>>()};
}

common::Expected<nlohmann::json> ServiceClient::poll(const std::string& path, const std::string& done_key,
                                                     const nlohmann::json& done_value) {
  char wait_s[32];
  std::snprintf(wait_s, sizeof wait_s, "%g", config_.wait_s);
  while (true) {
    auto r = request("GET", path + "?wait_s=" + wait_s, "", config_.wait_s + config_.request_timeout_s);
    if (!r || (r->contains(done_key) && (*r)[done_key] == done_value)) return r;
  }
}

common::Expected<nlohmann::json> ServiceClient::wait(const std::string& id) {
  return poll("/v1/evaluations/" + id, "state", "done");
}

common::Expected<nlohmann::json> ServiceClient::wait_batch(const std::string& batch) {
  return poll("/v1/batches/" + batch, "done", true);
}

common::Expected<nlohmann::json> ServiceClient::get(const std::string& path) {
  return request("GET", path, "", config_.request_timeout_s);
}

common::Expected<std::string> read_client_token(const std::string& path) {
  auto text = common::read_file(path, 1u << 20);
  if (!text) return common::make_error("--eval-service-token-file: " + text.error().message);
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    return line.substr(first, line.find_first_of(" \t\r", first) - first);  // the token; what follows is the server's
  }
  return common::make_error("--eval-service-token-file: " + path + " holds no token");
}

common::Expected<std::unique_ptr<ServiceEvaluator>> ServiceEvaluator::create(ServiceClientConfig config,
                                                                            const eval::EvalOptions& options,
                                                                            common::RuleSet rules) {
  if (!options.defenses || !options.separate_process) {
    return common::make_error("--eval-service: the service always evaluates with every defense and host candidates in a "
                              "process of their own; drop --host-candidate-in-child");
  }
  auto client = ServiceClient::create(std::move(config));
  if (!client) return client.error();
  auto health = (*client)->get("/healthz");
  if (!health) return common::make_error("--eval-service: " + health.error().message);
  std::unique_ptr<ServiceEvaluator> e(new ServiceEvaluator());
  const auto devices = health->value("devices", nlohmann::json::array());
  e->device_ = devices.size() == 1 ? devices[0].get<std::string>() : devices.empty() ? "service" : "mixed";
  e->client_ = std::move(*client);
  const nlohmann::json all = options;
  e->options_ = nlohmann::json::object();
  for (const auto& name : job_option_names()) e->options_[name] = all[name];
  e->rules_ = rules;
  return e;
}

nlohmann::json ServiceEvaluator::settings() const {
  return {{"evaluator", "service"},
          {"service", client_->config().base_url},
          {"device", device_},
          {"rules", std::string(common::to_string(rules_))},
          {"options", options_}};
}

common::Expected<eval::EvalResult> ServiceEvaluator::evaluate(const eval::EvalJob& job) {
  auto task_source = common::read_file(job.task, 16u << 20);
  if (!task_source) return task_source.error();
  auto candidate = common::read_file(job.candidate, 16u << 20);
  if (!candidate) return candidate.error();
  auto format = job.format ? job.format : common::format_from_extension(job.candidate.string());
  if (!format) {
    return common::make_error(job.candidate.string() +
                              ": cannot tell the candidate format from the extension; pass --format native|host|kernelbench");
  }
  nlohmann::json request = {{"task_source", *task_source},
                            {"task_name", job.task.string()},
                            {"candidate", *candidate},
                            {"candidate_name", job.candidate.string()},
                            {"format", std::string(common::to_string(*format))},
                            {"rules", std::string(common::to_string(job.rules.value_or(rules_)))},
                            {"options", options_}};
  if (job.device) request["device"] = *job.device;
  if (job.options) {
    const nlohmann::json all = *job.options;
    for (const auto& name : job_option_names()) request["options"][name] = all[name];
  }
  auto manifest = task::manifest_entry_for(job.task);
  if (!manifest) return manifest.error();
  if (*manifest) {
    nlohmann::json entry = task::manifest_entry_json(**manifest);
    entry.erase("file");
    entry["level"] = (*manifest)->level;
    request["task_manifest"] = entry;
  }
  auto id = client_->submit(std::move(request));
  if (!id) return id.error();
  auto view = client_->wait(*id);
  if (!view) return view.error();
  const nlohmann::json record = view->value("result", nlohmann::json());
  if (!record.is_object()) return common::make_error(client_->config().base_url + ": job " + *id + " is done without a result");
  if (record.contains("could_not_evaluate")) return common::make_error(record["could_not_evaluate"].get<std::string>());
  return record.get<eval::EvalResult>();
}

}  // namespace kernelrl::service
