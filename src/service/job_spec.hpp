// One evaluation job as the service carries it: what a client submits to POST /v1/evaluations
// (validated here, every error naming the field), and the self-contained form stored in Redis for
// the workers (task and candidate as text, so a worker needs no shared file system).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "service/task_sets.hpp"

namespace kernelrl::service {

struct JobSpec {
  std::string task_name;         // what the result's "task" says: a task-set path or the client's name
  std::string task_source;       // the task file's text
  bool task_from_set = false;    // the text is a task of this service's task sets; else the client's own,
                                 // which the worker evaluates confined (service/job_runner.hpp)
  nlohmann::json task_manifest;  // {"level": N, "entry": {...manifest.json entry...}} or null
  std::string candidate_name;    // what the result's "candidate" says; its file name is the compiled one's
  std::string candidate_source;
  common::Format format = common::Format::NATIVE;
  std::optional<common::RuleSet> rules;  // empty: the worker's default (strict)
  std::optional<std::string> device;     // "cuda" or "cpu" (kernelbench); empty: the format's own
  nlohmann::json options;        // eval::EvalOptions fields to override (object; may be empty)
  std::string client_id;         // the client's idempotency key; "" none
};

// Limits on what one job may carry (on top of the HTTP body limit).
struct JobLimits {
  std::size_t max_source_bytes = 16u << 20;  // task_source and candidate, each (a candidate over the
                                             // engine's 1 MiB is still a FORMAT_ERROR result, as in eval)
  std::size_t max_client_id_chars = 200;
  bool allow_task_source = false;  // true: tasks as text too (serve --allow-task-source), Python the workers run
};

// A 4xx answer: the HTTP status and a message naming the field (e.g. "jobs[3].format: ...").
struct RequestError {
  int http_status = 400;
  std::string message;
};

// Validates one submitted job (`where` prefixes messages: "job" or "jobs[3]"). A "task" path is
// resolved in `task_sets` and its text and manifest entry are copied in.
std::variant<JobSpec, RequestError> parse_job_request(const nlohmann::json& j, const std::string& where,
                                                      const TaskSets& task_sets, const JobLimits& limits);

// The stored form (Redis) and back; from_stored's Error names the field.
nlohmann::json to_stored(const JobSpec& spec);
common::Expected<JobSpec> from_stored(const nlohmann::json& j);

// The option names a job may set (eval::EvalOptions fields less device, defenses, separate_process).
const std::vector<std::string>& job_option_names();

}  // namespace kernelrl::service
