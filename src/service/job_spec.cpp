#include "service/job_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>

#include "eval/options.hpp"
#include "task/manifest.hpp"
#include "task/sizes.hpp"

namespace kernelrl::service {

namespace {

const std::vector<std::string> kJobFields = {"task",           "task_source", "task_name", "task_manifest",
                                             "candidate",      "candidate_name", "format", "rules",
                                             "device",         "options",     "client_id",   "size"};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

RequestError bad(const std::string& message, int status = 400) { return RequestError{status, message}; }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The string field `key`, if present; a RequestError if it is not a string.
std::variant<std::optional<std::string>, RequestError> string_field(const nlohmann::json& j, const std::string& key,
                                                                     const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::optional<std::string>{};
  if (!j[key].is_string()) return bad(where + "." + key + ": must be a string, got " + std::string(j[key].type_name()));
  return std::optional<std::string>{j[key].get<std::string>()};
}

bool client_id_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':' || c == '/';
}

std::string default_extension(common::Format f) {
  switch (f) {
    case common::Format::NATIVE: return ".cu";
    case common::Format::HOST: return ".cpp";
    case common::Format::KERNELBENCH: return ".py";
  }
  return "";
}

// Numeric option ranges: a job cannot ask for hours of one worker's time or zero trials.
struct Range {
  double lo, hi;
};
const std::map<std::string, Range>& option_ranges() {
  static const std::map<std::string, Range> r = {
      {"n_trials", {1, 100}},           {"atol", {-1, 1e6}},           {"rtol", {-1, 1e6}},
      {"n_warmup", {0, 1000}},          {"min_reps", {1, 100000}},     {"max_reps", {1, 100000}},
      {"timing_budget_ms", {0, 600000}}, {"max_held_device_mb", {0, 1e7}}, {"timeout_setup_s", {0.01, 3600}},
      {"timeout_load_s", {0.01, 3600}}, {"timeout_correctness_s", {0.01, 3600}}, {"timeout_timing_s", {0.01, 3600}},
      {"timeout_eager_multiple", {0, 1000}}};
  return r;
}

std::optional<RequestError> check_options(const nlohmann::json& o, const std::string& where) {
  if (!o.is_object()) return bad(where + ": must be an object of evaluation options");
  const auto& names = job_option_names();
  for (const auto& [key, value] : o.items()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      std::string why = key == "device"    ? " (set the job's own \"device\")"
                        : key == "defenses" || key == "separate_process" ? " (not settable through the service)"
                                                                         : "";
      return bad(where + "." + key + ": not an option a job may set" + why + "; options: " + joined(names));
    }
    if (key == "precision") {
      if (!value.is_string() || (value != "" && !eval::precision_torch_dtype(value.get<std::string>()))) {
        return bad(where + ".precision: " + value.dump() +
                   " is not one of \"fp32\", \"fp16\", \"bf16\" (or \"\": the task's own dtypes)");
      }
      continue;
    }
    auto range = option_ranges().find(key);
    if (range == option_ranges().end()) {  // the booleans
      if (!value.is_boolean()) return bad(where + "." + key + ": must be true or false");
      continue;
    }
    if (!value.is_number()) return bad(where + "." + key + ": must be a number");
    const double v = value.get<double>();
    if (!(v >= range->second.lo && v <= range->second.hi)) {
      return bad(where + "." + key + ": " + value.dump() + " is outside [" + number(range->second.lo) + ", " +
                 number(range->second.hi) + "]");
    }
    if ((key.rfind("n_", 0) == 0 || key.find("_reps") != std::string::npos) && !value.is_number_integer()) {
      return bad(where + "." + key + ": must be a whole number");
    }
  }
  return std::nullopt;
}

// The job's task at `size`, as `kernelrl eval --size` makes it (task::source_at_size). A task in
// no manifest has only its own size, as in eval, and stays as it is.
std::optional<RequestError> apply_size(JobSpec& spec, const std::string& size, const std::string& where) {
  if (spec.task_manifest.is_null()) return std::nullopt;
  const auto& m = spec.task_manifest;
  auto entry = task::parse_manifest_entry(m.at("entry"), m.at("level").get<int>(), where + ".task_manifest");
  if (!entry) return bad(entry.error().message);
  auto sized = task::source_at_size(spec.task_source, *entry, size, spec.task_name, spec.task_name);
  if (!sized) return bad(where + ".size: " + sized.error().message);
  if (!*sized) return std::nullopt;
  spec.task_source = std::move((*sized)->source);
  spec.task_manifest = {{"level", entry->level}, {"entry", task::manifest_entry_json((*sized)->entry)}};
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& job_option_names() {
  static const std::vector<std::string> names = {
      "n_trials", "atol", "rtol", "time_kernels", "n_warmup", "min_reps", "max_reps", "timing_budget_ms", "flush_l2",
      "allow_tf32", "precision", "torch_op_audit", "max_held_device_mb", "timeout_setup_s", "timeout_load_s",
      "timeout_correctness_s", "timeout_timing_s", "timeout_eager_multiple"};
  return names;
}

std::variant<JobSpec, RequestError> parse_job_request(const nlohmann::json& j, const std::string& where,
                                                      const TaskSets& task_sets, const JobLimits& limits) {
  if (!j.is_object()) return bad(where + ": must be an object with \"candidate\" and \"task\" or \"task_source\"");
  for (const auto& [key, value] : j.items()) {
    if (std::find(kJobFields.begin(), kJobFields.end(), key) == kJobFields.end()) {
      return bad(where + "." + key + ": unknown field; a job has " + joined(kJobFields));
    }
  }
  std::map<std::string, std::optional<std::string>> s;
  for (const char* key : {"task", "task_source", "task_name", "candidate", "candidate_name", "format", "rules",
                          "device", "client_id", "size"}) {
    auto v = string_field(j, key, where);
    if (auto* e = std::get_if<RequestError>(&v)) return *e;
    s[key] = std::get<std::optional<std::string>>(v);
  }
  JobSpec spec;
  // The candidate: its text, the name results give it, its format.
  if (!s["candidate"]) return bad(where + ".candidate: missing (the candidate's source text)");
  spec.candidate_source = *s["candidate"];
  if (spec.candidate_source.size() > limits.max_source_bytes) {
    return bad(where + ".candidate: " + std::to_string(spec.candidate_source.size()) + " bytes, over the " +
                   std::to_string(limits.max_source_bytes) + "-byte limit of a job",
               413);
  }
  if (s["format"]) {
    auto f = common::parse_format(*s["format"]);
    if (!f) return bad(where + ".format: '" + *s["format"] + "' is not one of native, host, kernelbench");
    spec.format = *f;
  } else if (auto f = s["candidate_name"] ? common::format_from_extension(*s["candidate_name"]) : std::nullopt) {
    spec.format = *f;
  } else {
    return bad(where + ".format: missing, and no candidate_name with a .cu, .cpp or .py extension to tell it from");
  }
  spec.candidate_name = s["candidate_name"].value_or("candidate" + default_extension(spec.format));
  if (std::filesystem::path(spec.candidate_name).filename().empty()) {
    return bad(where + ".candidate_name: '" + spec.candidate_name + "' has no file name");
  }
  if (s["rules"]) {
    spec.rules = common::parse_rule_set(*s["rules"]);
    if (!spec.rules) return bad(where + ".rules: '" + *s["rules"] + "' is not one of strict, kernelbench, observe");
  }
  if (s["device"]) {
    if (*s["device"] != "cuda" && *s["device"] != "cpu") {
      return bad(where + ".device: '" + *s["device"] + "' is not one of cuda, cpu");
    }
    spec.device = s["device"];
  }
  // The task: a path in a task set of this service, or its text.
  if (s["task"] && s["task_source"]) return bad(where + ": give either \"task\" (a task-set path) or \"task_source\", not both");
  if (s["task"]) {
    if (s["task_name"] || j.contains("task_manifest")) {
      return bad(where + ": task_name and task_manifest go with task_source; a task-set path names its own");
    }
    auto resolved = task_sets.resolve(*s["task"], where + ".task");
    if (!resolved) return bad(resolved.error().message, 404);
    spec.task_name = resolved->name;
    spec.task_source = std::move(resolved->source);
    spec.task_from_set = true;
    spec.task_manifest = std::move(resolved->manifest);
  } else if (s["task_source"]) {
    if (!limits.allow_task_source) {
      return bad(where + ".task_source: this service takes tasks from this token by task-set path only (a task is "
                 "Python the workers run: a token marked `TOKEN task_source` in the --token-file, or serve "
                 "--allow-task-source for every token, may send them as text); see GET /v1/tasks", 403);
    }
    spec.task_source = *s["task_source"];
    if (spec.task_source.size() > limits.max_source_bytes) {
      return bad(where + ".task_source: " + std::to_string(spec.task_source.size()) + " bytes, over the " +
                     std::to_string(limits.max_source_bytes) + "-byte limit of a job",
                 413);
    }
    spec.task_name = s["task_name"].value_or("task.py");
    if (std::filesystem::path(spec.task_name).extension() != ".py") {
      return bad(where + ".task_name: '" + spec.task_name + "' must end in .py (a KernelBench task file)");
    }
    if (j.contains("task_manifest") && !j["task_manifest"].is_null()) {
      const auto& m = j["task_manifest"];
      if (!m.is_object() || !m.contains("level") || !m["level"].is_number_integer()) {
        return bad(where + ".task_manifest: must be the task's manifest.json entry with its integer \"level\"");
      }
      nlohmann::json entry = m;
      entry.erase("level");
      entry["file"] = std::filesystem::path(spec.task_name).filename().string();
      auto parsed = task::parse_manifest_entry(entry, m["level"].get<int>(), where + ".task_manifest");
      if (!parsed) return bad(parsed.error().message);
      spec.task_manifest = {{"level", parsed->level}, {"entry", task::manifest_entry_json(*parsed)}};
    }
  } else {
    return bad(where + ": missing \"task\" (a task-set path, see GET /v1/tasks) or \"task_source\" (the task's text)");
  }
  if (s["size"]) {
    if (auto e = apply_size(spec, *s["size"], where)) return *e;
  }
  if (j.contains("options") && !j["options"].is_null()) {
    if (auto e = check_options(j["options"], where + ".options")) return *e;
    spec.options = j["options"];
  } else {
    spec.options = nlohmann::json::object();
  }
  if (s["client_id"]) {
    const std::string& id = *s["client_id"];
    if (id.empty() || id.size() > limits.max_client_id_chars || !std::all_of(id.begin(), id.end(), client_id_char)) {
      return bad(where + ".client_id: '" + id.substr(0, 64) + "' must be 1-" + std::to_string(limits.max_client_id_chars) +
                 " characters of letters, digits and - _ . : /");
    }
    spec.client_id = id;
  }
  return spec;
}

nlohmann::json to_stored(const JobSpec& spec) {
  nlohmann::json j = {{"task_name", spec.task_name},
                      {"task_source", spec.task_source},
                      {"task_manifest", spec.task_manifest},
                      {"candidate_name", spec.candidate_name},
                      {"candidate_source", spec.candidate_source},
                      {"format", std::string(common::to_string(spec.format))},
                      {"options", spec.options},
                      {"client_id", spec.client_id}};
  if (spec.rules) j["rules"] = std::string(common::to_string(*spec.rules));
  if (spec.device) j["device"] = *spec.device;
  if (spec.task_from_set) j["task_from_set"] = true;
  return j;
}

common::Expected<JobSpec> from_stored(const nlohmann::json& j) {
  auto text = [&](const char* key, bool required, std::string& out) -> bool {
    if (!j.contains(key)) return !required;
    if (!j[key].is_string()) return false;
    out = j[key].get<std::string>();
    return true;
  };
  JobSpec spec;
  std::string format, rules, device;
  for (auto [key, required, out] : {std::tuple{"task_name", true, &spec.task_name},
                                    std::tuple{"task_source", true, &spec.task_source},
                                    std::tuple{"candidate_name", true, &spec.candidate_name},
                                    std::tuple{"candidate_source", true, &spec.candidate_source},
                                    std::tuple{"format", true, &format}, std::tuple{"rules", false, &rules},
                                    std::tuple{"device", false, &device}, std::tuple{"client_id", false, &spec.client_id}}) {
    if (!text(key, required, *out)) {
      return common::make_error(std::string("stored job: '") + key + "' is missing or not a string");
    }
  }
  auto f = common::parse_format(format);
  if (!f) return common::make_error("stored job: format '" + format + "' is unknown");
  spec.format = *f;
  if (!rules.empty()) {
    spec.rules = common::parse_rule_set(rules);
    if (!spec.rules) return common::make_error("stored job: rules '" + rules + "' is unknown");
  }
  if (!device.empty()) spec.device = device;
  spec.task_manifest = j.value("task_manifest", nlohmann::json());
  // Anything but true (a job stored before the mark, or a mark of another type) is a client's task.
  spec.task_from_set = j.contains("task_from_set") && j["task_from_set"] == true;
  spec.options = j.contains("options") && !j["options"].is_null() ? j["options"] : nlohmann::json::object();
  if (auto e = check_options(spec.options, "stored job: options")) return common::make_error(e->message);
  return spec;
}

}  // namespace kernelrl::service
