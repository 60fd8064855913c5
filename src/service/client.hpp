// A client of the evaluation service (`kernelrl serve`), and the rollout Evaluator on top of it
// (`kernelrl rollout|train --eval-service URL`). Requests that fail on the connection, or with 429
// or 503, are retried with backoff (honouring Retry-After) until retry_for_s has passed; each
// submitted job carries a client_id, so a retried submission never enqueues it twice.
// Thread-safe: many rollout threads share one client.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "eval/options.hpp"
#include "rollout/evaluator.hpp"

namespace kernelrl::service {

struct ServiceClientConfig {
  std::string base_url;        // http://HOST:PORT of `kernelrl serve`
  std::string token;           // bearer token; "" sends none
  double request_timeout_s = 90;  // one HTTP request (a wait asks for at most wait_s less than this)
  double wait_s = 30;          // wait_s of each result poll
  double retry_for_s = 600;    // give up after failing this long in a row (service or Redis away)
};

struct SubmittedBatch {
  std::string batch;
  std::vector<std::string> ids;
};

class ServiceClient {
 public:
  // An Error for a URL that is not http://HOST[:PORT].
  static common::Expected<std::unique_ptr<ServiceClient>> create(ServiceClientConfig config);

  // POST /v1/evaluations with one job (client_id added when absent); returns its id. A 4xx names the field.
  common::Expected<std::string> submit(nlohmann::json job);
  common::Expected<SubmittedBatch> submit_batch(std::vector<nlohmann::json> jobs);
  // Polls until the job is done; returns its view ({"id", "state", "attempts", "result", ...}).
  common::Expected<nlohmann::json> wait(const std::string& id);
  // Polls until every job of the batch is done; returns {"batch", "n_jobs", "n_done", "done", "jobs"}.
  common::Expected<nlohmann::json> wait_batch(const std::string& batch);
  // GET of any path (e.g. "/healthz", "/v1/tasks"), with retries.
  common::Expected<nlohmann::json> get(const std::string& path);

  const ServiceClientConfig& config() const { return config_; }

 private:
  explicit ServiceClient(ServiceClientConfig config) : config_(std::move(config)) {}
  // GETs `path` (waiting wait_s each time) until the answer's done_key equals done_value.
  common::Expected<nlohmann::json> poll(const std::string& path, const std::string& done_key,
                                        const nlohmann::json& done_value);
  // One request with retries; the parsed body of a 2xx answer.
  common::Expected<nlohmann::json> request(const std::string& method, const std::string& path, const std::string& body,
                                           double timeout_s);
  ServiceClientConfig config_;
};

// Reads the token for a client: the first token line of `path` (as serve's --token-file).
common::Expected<std::string> read_client_token(const std::string& path);

// The service as the rollout's evaluator: each job's task and candidate files are sent as text
// (with the task's manifest entry), evaluated with `options` and `rules` (the command's own
// evaluation options), and the stored record comes back as the EvalResult. A job the service could
// not evaluate is an Error, as with the in-process engine.
class ServiceEvaluator final : public rollout::Evaluator {
 public:
  // Asks the service which device its workers use (GET /healthz); an Error when it does not answer,
  // or when `options` ask for what the service does not allow (defenses off, host candidates in the
  // evaluating process).
  static common::Expected<std::unique_ptr<ServiceEvaluator>> create(ServiceClientConfig config,
                                                                   const eval::EvalOptions& options,
                                                                   common::RuleSet rules);
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override;
  std::string device() const override { return device_; }
  // The service's address, the options and rules sent with every job, the workers' device.
  nlohmann::json settings() const override;

 private:
  ServiceEvaluator() = default;
  std::unique_ptr<ServiceClient> client_;
  nlohmann::json options_;
  common::RuleSet rules_ = common::RuleSet::STRICT;
  std::string device_;
};

}  // namespace kernelrl::service
