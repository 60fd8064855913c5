#include "eval/protocol.hpp"

namespace kernelrl::eval {

std::string to_string(ChildOp op) {
  switch (op) {
    case ChildOp::EVAL: return "eval";
    case ChildOp::TASK_INFO: return "task_info";
    case ChildOp::DEVICE_INFO: return "device_info";
  }
  return "eval";
}

std::optional<ChildOp> parse_child_op(const std::string& name) {
  for (ChildOp op : {ChildOp::EVAL, ChildOp::TASK_INFO, ChildOp::DEVICE_INFO}) {
    if (to_string(op) == name) return op;
  }
  return std::nullopt;
}

void to_json(nlohmann::json& j, const ChildRequest& r) {
  j = {{"op", to_string(r.op)},
       {"artifact", r.artifact},
       {"candidate", r.candidate},
       {"format", common::to_string(r.format)},
       {"rules", common::to_string(r.rules)},
       {"options", r.options},
       {"device", r.device}};
  if (r.cached_ref) j["cached_ref"] = *r.cached_ref;
  if (r.confine_task) j["confine_task"] = true;
}

void from_json(const nlohmann::json& j, ChildRequest& r) {
  r.op = parse_child_op(j.value("op", "eval")).value_or(ChildOp::EVAL);
  r.artifact = j.value("artifact", "");
  r.candidate = j.value("candidate", "");
  r.format = common::parse_format(j.value("format", "native")).value_or(common::Format::NATIVE);
  r.rules = common::parse_rule_set(j.value("rules", "strict")).value_or(common::RuleSet::STRICT);
  r.options = j.value("options", EvalOptions{});
  r.device = j.value("device", "cpu");
  if (j.contains("cached_ref")) r.cached_ref = j.at("cached_ref").get<TimingSummary>();
  r.confine_task = j.value("confine_task", false);
}

void to_json(nlohmann::json& j, const WorkerRequest& r) {
  j = {{"task", r.task}, {"child", r.child}};
  if (r.handed_at_ns) j["handed_at_ns"] = *r.handed_at_ns;
  if (!r.report_key.empty()) j["report_key"] = r.report_key;
}

void from_json(const nlohmann::json& j, WorkerRequest& r) {
  r.task = j.value("task", "");
  r.child = j.value("child", ChildRequest{});
  r.handed_at_ns.reset();
  if (j.contains("handed_at_ns") && j["handed_at_ns"].is_number()) r.handed_at_ns = j["handed_at_ns"].get<std::int64_t>();
  r.report_key = j.value("report_key", "");
}

nlohmann::json to_json(const ChildRecord& r) {
  nlohmann::json j = nlohmann::json::object();
  if (r.task_error) j["task_error"] = *r.task_error;
  if (r.device_info) j["device_info"] = *r.device_info;
  if (r.result) j["result"] = *r.result;
  if (r.signature) j["signature"] = task::to_json(*r.signature);
  if (r.ref_timing) j["ref_timing"] = *r.ref_timing;
  if (r.health) j["health"] = *r.health;
  return j;
}

common::Expected<ChildRecord> parse_child_record(const nlohmann::json& j) {
  if (!j.is_object()) return common::make_error("the evaluation process's record is not a JSON object");
  ChildRecord r;
  try {
    if (j.contains("task_error")) {
      r.task_error = j.at("task_error").get<std::string>();
      return r;
    }
    if (j.contains("device_info")) {
      r.device_info = j.at("device_info");
      return r;
    }
    if (!j.contains("result")) {
      return common::make_error("the evaluation process's record has none of result, task_error, device_info");
    }
    r.result = j.at("result").get<EvalResult>();
    if (j.contains("signature")) r.signature = task::signature_from_json(j.at("signature"));
    if (j.contains("ref_timing")) r.ref_timing = j.at("ref_timing").get<TimingSummary>();
    if (j.contains("health")) r.health = j.at("health");
  } catch (const nlohmann::json::exception& e) {
    return common::make_error(std::string("the evaluation process's record is malformed: ") + e.what());
  }
  return r;
}

void to_json(nlohmann::json& j, const WorkerReply& r) {
  j = nlohmann::json::object();
  if (r.error) {
    j["error"] = *r.error;
    return;
  }
  if (r.record) j["record"] = *r.record;
  j["outcome"] = r.outcome;
}

common::Expected<WorkerReply> parse_worker_reply(const nlohmann::json& j) {
  WorkerReply r;
  if (j.contains("error")) {
    r.error = j.at("error").get<std::string>();
    return r;
  }
  if (!j.contains("outcome") || !j.at("outcome").is_object()) {
    return common::make_error("the worker's reply has neither an error nor an outcome: " + j.dump().substr(0, 300));
  }
  try {
    r.outcome = j.at("outcome").get<ChildEnd>();
  } catch (const nlohmann::json::exception& e) {
    return common::make_error(std::string("the worker's reply has a malformed outcome: ") + e.what());
  }
  if (j.contains("record")) r.record = j.at("record");
  return r;
}

bool says_device_memory_ran_out(std::string_view message) {
  return message.find("out of memory") != std::string_view::npos ||
         message.find("OutOfMemoryError") != std::string_view::npos ||
         message.find("cudaErrorDevicesUnavailable") != std::string_view::npos ||
         message.find("device(s) is/are busy or unavailable") != std::string_view::npos;
}

bool found_device_memory_short(const EvalResult& r) {
  if (r.status != common::Status::RUNTIME_ERROR || !r.isolation.is_object()) return false;
  const auto short_of_memory = r.isolation.find("device_memory_short");
  return short_of_memory != r.isolation.end() && short_of_memory->is_boolean() && short_of_memory->get<bool>();
}

}  // namespace kernelrl::eval
