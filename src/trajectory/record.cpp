// The record's JSON both ways. Reading checks each field's type where present and names the field
// at fault; the outcome is derived here once, from whichever error field is set.
#include "trajectory/record.hpp"

#include <filesystem>

namespace kernelrl::trajectory {

using common::Expected;
using common::make_error;
using nlohmann::json;

namespace {

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json to_json(const Response& r) {
  return {{"content", r.content},          {"reasoning", r.reasoning},     {"finish_reason", r.finish_reason},
          {"tokens", or_null(r.token_ids)}, {"logprobs", or_null(r.logprobs)}, {"latency_ms", r.latency_ms}};
}

json to_json(const std::optional<TurnRef>& ref) {
  if (!ref) return nullptr;
  return {{"trajectory", ref->trajectory}, {"turn", ref->turn}};
}

std::string field(const char* name) { return std::string("field `") + name + "`"; }

bool present(const json& j, const char* name) { return j.contains(name) && !j[name].is_null(); }

// A string field: none when null or absent, an Error when of another type.
Expected<std::optional<std::string>> optional_string(const json& j, const char* name) {
  if (!present(j, name)) return std::optional<std::string>{};
  if (!j[name].is_string()) return make_error(field(name) + " is not a string or null");
  return std::optional<std::string>{j[name].get<std::string>()};
}

Expected<std::optional<double>> optional_number(const json& j, const char* name) {
  if (!present(j, name)) return std::optional<double>{};
  if (!j[name].is_number()) return make_error(field(name) + " is not a number or null");
  return std::optional<double>{j[name].get<double>()};
}

Expected<std::optional<int>> optional_int(const json& j, const char* name) {
  if (!present(j, name)) return std::optional<int>{};
  if (!j[name].is_number_integer()) return make_error(field(name) + " is not an integer or null");
  return std::optional<int>{j[name].get<int>()};
}

// The placing fields every record (full or update) has.
common::Fallible read_place(const json& j, std::string& task, TurnRef& ref) {
  if (!j.is_object()) return make_error("not a JSON object");
  if (!j.contains("task")) return make_error("missing field `task`");
  if (!j["task"].is_string()) return make_error("field `task` is not a string");
  for (const char* name : {"trajectory", "turn"}) {
    if (!j.contains(name)) return make_error(std::string("missing field `") + name + "`");
    if (!j[name].is_number_integer()) return make_error(field(name) + " is not an integer");
  }
  task = j["task"].get<std::string>();
  ref = {j["trajectory"].get<int>(), j["turn"].get<int>()};
  if (ref.trajectory < 0) return make_error("field `trajectory` is negative");
  if (ref.turn < 1) return make_error("field `turn` is below 1 (turns count from 1)");
  return common::Ok{};
}

Expected<Response> read_response(const json& j) {
  Response r;
  if (!j.is_object()) return make_error("field `response` is not an object");
  try {
    r.content = j.value("content", "");
    r.reasoning = j.value("reasoning", "");
    r.finish_reason = j.value("finish_reason", "");
    if (present(j, "tokens")) r.token_ids = j["tokens"].get<std::vector<std::int64_t>>();
    if (present(j, "logprobs")) r.logprobs = j["logprobs"].get<std::vector<double>>();
    r.latency_ms = j.value("latency_ms", 0.0);
  } catch (const json::exception& e) {
    return make_error(std::string("field `response`: ") + e.what());
  }
  return r;
}

Expected<std::vector<Message>> read_messages(const json& j) {
  std::vector<Message> messages;
  if (!j.is_array()) return make_error("field `messages` is not an array");
  for (const auto& m : j) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string()) {
      return make_error("field `messages` holds an entry without string `role` and `content`");
    }
    messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  return messages;
}

}  // namespace

const char* to_string(TurnOutcome outcome) {
  switch (outcome) {
    case TurnOutcome::EVALUATED: return "EVALUATED";
    case TurnOutcome::PARSE_ERROR: return "PARSE_ERROR";
    case TurnOutcome::POLICY_ERROR: return "POLICY_ERROR";
    case TurnOutcome::PROMPT_TOO_LONG: return "PROMPT_TOO_LONG";
    case TurnOutcome::NO_RESULT: return "NO_RESULT";
  }
  return "NO_RESULT";
}

std::string TurnRecord::status() const {
  if (outcome == TurnOutcome::EVALUATED) {
    return result && result->contains("status") && (*result)["status"].is_string() ? (*result)["status"].get<std::string>() : "";
  }
  return outcome == TurnOutcome::NO_RESULT ? "" : to_string(outcome);
}

std::string TurnRecord::feedback() const {
  if (outcome != TurnOutcome::EVALUATED) return error;
  if (!result || !result->contains("error")) return "";
  const json& e = (*result)["error"];
  return e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
}

json to_json(const TurnRecord& r) {
  json messages = json::array();
  for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  auto error_if = [&](TurnOutcome o) { return r.outcome == o ? json(r.error) : json(nullptr); };
  return {{"schema", kSchema},
          {"task", r.task},
          {"task_id", r.task_id},
          {"level", or_null(r.level)},
          {"split", or_null(r.split)},
          {"trajectory", r.trajectory},
          {"turn", r.turn},
          {"parent", to_json(r.parent)},
          {"messages", messages},
          {"response", to_json(r.response)},
          {"code", or_null(r.code)},
          {"summary", r.summary},
          {"parse_error", error_if(TurnOutcome::PARSE_ERROR)},
          {"policy_error", error_if(TurnOutcome::POLICY_ERROR)},
          {"prompt_error", error_if(TurnOutcome::PROMPT_TOO_LONG)},
          {"result", r.outcome == TurnOutcome::EVALUATED ? or_null(r.result) : json(nullptr)},
          {"correct", r.correct},
          {"speedup", or_null(r.speedup)},
          {"score", r.score},
          {"return", or_null(r.return_)},
          {"advantage", or_null(r.advantage)},
          {"advantage_kind", r.advantage_kind},
          {"return_kind", r.return_kind}};
}

json to_json(const TurnUpdate& u) {
  return {{"update", true},      {"task", u.task},         {"trajectory", u.ref.trajectory},
          {"turn", u.ref.turn}, {"return", or_null(u.return_)}, {"advantage", or_null(u.advantage)}};
}

bool is_update(const json& line) {
  return line.is_object() && line.contains("update") && line["update"].is_boolean() && line["update"].get<bool>();
}

Expected<TurnRecord> read_turn_record(const json& j) {
  TurnRecord r;
  TurnRef ref;
  if (auto placed = read_place(j, r.task, ref); !placed) return placed.error();
  r.trajectory = ref.trajectory;
  r.turn = ref.turn;
  if (!j.contains("correct")) return make_error("missing field `correct`");
  if (!j["correct"].is_boolean()) return make_error("field `correct` is not true or false");
  r.correct = j["correct"].get<bool>();

  auto task_id = optional_string(j, "task_id");
  auto split = optional_string(j, "split");
  auto code = optional_string(j, "code");
  auto summary = optional_string(j, "summary");
  auto parse_error = optional_string(j, "parse_error");
  auto policy_error = optional_string(j, "policy_error");
  auto prompt_error = optional_string(j, "prompt_error");
  auto return_kind = optional_string(j, "return_kind");
  auto advantage_kind = optional_string(j, "advantage_kind");
  for (const auto* e : {&task_id, &split, &code, &summary, &parse_error, &policy_error, &prompt_error, &return_kind,
                        &advantage_kind}) {
    if (!*e) return e->error();
  }
  auto speedup = optional_number(j, "speedup");
  auto score = optional_number(j, "score");
  auto ret = optional_number(j, "return");
  auto advantage = optional_number(j, "advantage");
  for (const auto* e : {&speedup, &score, &ret, &advantage}) {
    if (!*e) return e->error();
  }
  auto level = optional_int(j, "level");
  if (!level) return level.error();

  r.task_id = task_id->value_or(std::filesystem::path(r.task).stem().string());
  r.level = *level;
  r.split = *split;
  r.code = *code;
  r.summary = summary->value_or("");
  r.return_kind = return_kind->value_or("");
  r.advantage_kind = advantage_kind->value_or("");
  r.speedup = *speedup;
  r.score = score->value_or(0.0);
  r.return_ = *ret;
  r.advantage = *advantage;
  if (present(j, "parent")) {
    TurnRef parent;
    const json& p = j["parent"];
    if (!p.is_object() || !p.contains("trajectory") || !p["trajectory"].is_number_integer() || !p.contains("turn") ||
        !p["turn"].is_number_integer()) {
      return make_error("field `parent` needs integer `trajectory` and `turn`");
    }
    r.parent = TurnRef{p["trajectory"].get<int>(), p["turn"].get<int>()};
  }
  if (present(j, "messages")) {
    auto messages = read_messages(j["messages"]);
    if (!messages) return messages.error();
    r.messages = std::move(*messages);
  }
  if (present(j, "response")) {
    auto response = read_response(j["response"]);
    if (!response) return response.error();
    r.response = std::move(*response);
  }
  if (present(j, "result")) {
    if (!j["result"].is_object()) return make_error("field `result` is not an object or null");
    r.result = j["result"];
  }
  // One of these is set by the writer; the order only matters for hand-made records.
  if (*prompt_error) {
    r.outcome = TurnOutcome::PROMPT_TOO_LONG;
    r.error = **prompt_error;
  } else if (*policy_error) {
    r.outcome = TurnOutcome::POLICY_ERROR;
    r.error = **policy_error;
  } else if (*parse_error) {
    r.outcome = TurnOutcome::PARSE_ERROR;
    r.error = **parse_error;
  } else {
    r.outcome = r.result ? TurnOutcome::EVALUATED : TurnOutcome::NO_RESULT;
  }
  return r;
}

Expected<TurnUpdate> read_turn_update(const json& j) {
  TurnUpdate u;
  if (auto placed = read_place(j, u.task, u.ref); !placed) return placed.error();
  auto ret = optional_number(j, "return");
  if (!ret) return ret.error();
  auto advantage = optional_number(j, "advantage");
  if (!advantage) return advantage.error();
  u.return_ = *ret;
  u.advantage = *advantage;
  return u;
}

void apply(const TurnUpdate& update, TurnRecord& record) {
  if (update.return_) record.return_ = update.return_;
  if (update.advantage) record.advantage = update.advantage;
}

}  // namespace kernelrl::trajectory
