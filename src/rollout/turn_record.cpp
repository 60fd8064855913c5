#include "rollout/turn_record.hpp"

namespace kernelrl::rollout {

using nlohmann::json;
using common::make_error;

namespace {

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json to_json(const PolicyResponse& r) {
  return {{"content", r.content},          {"reasoning", r.reasoning},     {"finish_reason", r.finish_reason},
          {"tokens", or_null(r.token_ids)}, {"logprobs", or_null(r.logprobs)}, {"latency_ms", r.latency_ms}};
}

json to_json(const std::optional<TurnRef>& ref) {
  if (!ref) return nullptr;
  return {{"trajectory", ref->trajectory}, {"turn", ref->turn}};
}

common::Expected<TurnRef> read_ref(const json& j, const char* what) {
  if (!j.is_object() || !j.contains("trajectory") || !j["trajectory"].is_number_integer() || !j.contains("turn") ||
      !j["turn"].is_number_integer()) {
    return make_error(std::string("field `") + what + "` needs integer `trajectory` and `turn`");
  }
  return TurnRef{j["trajectory"].get<int>(), j["turn"].get<int>()};
}

}  // namespace

json to_json(const TurnRecord& r) {
  json messages = json::array();
  for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"schema", kTrajectorySchema},
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
          {"parse_error", or_null(r.parse_error)},
          {"policy_error", or_null(r.policy_error)},
          {"prompt_error", or_null(r.prompt_error)},
          {"result", r.result ? json(*r.result) : json(nullptr)},
          {"correct", r.correct},
          {"speedup", or_null(r.speedup)},
          {"score", r.score},
          {"return", or_null(r.return_)},
          {"advantage", or_null(r.advantage)},
          {"advantage_kind", r.advantage_kind},
          {"return_kind", r.return_kind}};
}

json update_json(const std::string& task, TurnRef turn, double return_, double advantage) {
  return {{"update", true},   {"task", task},         {"trajectory", turn.trajectory},
          {"turn", turn.turn}, {"return", return_}, {"advantage", advantage}};
}

bool is_update(const json& record) {
  return record.is_object() && record.contains("update") && record["update"].is_boolean() && record["update"].get<bool>();
}

FinishedTurn finished_turn(const TurnRecord& r) {
  FinishedTurn t;
  t.task = r.task;
  t.ref = {r.trajectory, r.turn};
  t.parent = r.parent;
  t.attempt = {r.code.value_or(""), r.summary,
               r.policy_error ? no_response_line(*r.policy_error)
                              : feedback_line(r.parse_error, r.result.value_or(eval::EvalResult{}))};
  t.policy_error = r.policy_error.has_value();
  t.unanswered = r.prompt_error.has_value();
  t.correct = r.correct;
  t.score = r.score;
  t.credited = t.unanswered || (r.return_ && r.advantage);  // an unanswered turn has nothing to credit
  return t;
}

std::optional<TurnRef> continues_from(TurnRef ref, const std::optional<TurnRef>& parent) {
  if (ref.turn <= 1) return std::nullopt;
  return parent ? *parent : TurnRef{ref.trajectory, ref.turn - 1};
}

common::Expected<FinishedTurn> read_finished_turn(const json& j) {
  if (!j.is_object()) return make_error("not a JSON object");
  auto ref = read_ref(j, "trajectory/turn");
  if (!ref) return ref.error();
  if (!j.contains("task") || !j["task"].is_string()) return make_error("missing string field `task`");
  if (!j.contains("score") || !j["score"].is_number()) return make_error("missing number field `score`");
  if (!j.contains("correct") || !j["correct"].is_boolean()) return make_error("missing field `correct`");
  FinishedTurn t;
  t.task = j["task"].get<std::string>();
  t.ref = *ref;
  if (j.contains("parent") && !j["parent"].is_null()) {
    auto parent = read_ref(j["parent"], "parent");
    if (!parent) return parent.error();
    t.parent = *parent;
  }
  std::optional<std::string> parse_error;
  if (j.contains("parse_error") && j["parse_error"].is_string()) parse_error = j["parse_error"].get<std::string>();
  std::optional<std::string> policy_error;
  if (j.contains("policy_error") && j["policy_error"].is_string()) policy_error = j["policy_error"].get<std::string>();
  const bool unanswered = j.contains("prompt_error") && j["prompt_error"].is_string();
  eval::EvalResult result;
  if (j.contains("result") && j["result"].is_object()) {
    try {
      result = j["result"].get<eval::EvalResult>();
    } catch (const json::exception& e) {
      return make_error(std::string("field `result` is not a result record: ") + e.what());
    }
  } else if (!parse_error && !policy_error && !unanswered) {
    return make_error("field `result` is null but none of `parse_error`, `policy_error`, `prompt_error` is set");
  }
  t.attempt.code = j.contains("code") && j["code"].is_string() ? j["code"].get<std::string>() : "";
  t.attempt.summary = j.contains("summary") && j["summary"].is_string() ? j["summary"].get<std::string>() : "";
  t.attempt.feedback = policy_error ? no_response_line(*policy_error) : feedback_line(parse_error, result);
  t.policy_error = policy_error.has_value();
  t.unanswered = unanswered;
  t.correct = j["correct"].get<bool>();
  t.score = j["score"].get<double>();
  t.credited = unanswered ||
               (j.contains("return") && j["return"].is_number() && j.contains("advantage") && j["advantage"].is_number());
  return t;
}

}  // namespace kernelrl::rollout
