#include "rollout/env_protocol.hpp"

#include <iostream>
#include <optional>

#include "rl/rewards.hpp"
#include "rollout/credit.hpp"
#include "rollout/response_parser.hpp"
#include "rollout/rollout_config.hpp"
#include "rollout/turn_step.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A request field that does not fit: the answer's error names it.
struct FieldError {
  std::string message;
};

template <class T>
T field(const json& request, const std::string& name, std::optional<T> fallback = std::nullopt) {
  if (!request.contains(name) || request[name].is_null()) {
    if (fallback) return *fallback;
    throw FieldError{name + ": missing"};
  }
  try {
    return request[name].get<T>();
  } catch (const json::exception&) {
    throw FieldError{name + ": " + request[name].dump().substr(0, 80) + " has the wrong type"};
  }
}

std::optional<std::string> optional_string(const json& request, const std::string& name) {
  if (!request.contains(name) || request[name].is_null()) return std::nullopt;
  return field<std::string>(request, name);
}

common::Format format_field(const json& request) {
  const auto name = field<std::string>(request, "format");
  auto format = common::parse_format(name);
  if (!format) throw FieldError{"format: '" + name + "' is not one of native, host, kernelbench"};
  return *format;
}

json parse(const json& request) {
  const ParsedResponse p = parse_response(field<std::string>(request, "content"),
                                          field<std::string>(request, "reasoning", std::string()),
                                          format_field(request), field<bool>(request, "lenient", false));
  return {{"ok", p.ok},
          {"parse_error", p.ok ? json(nullptr) : json(p.error)},
          {"thoughts", p.thoughts},
          {"code", p.code},
          {"summary", p.summary}};
}

rl::ScoreConfig score_config(const json& request) {
  rl::ScoreConfig c;
  c.w_correct = field<double>(request, "w_correct", c.w_correct);
  if (request.contains("speedup_cap") && !request["speedup_cap"].is_null()) c.speedup_cap = field<double>(request, "speedup_cap");
  return c;
}

// What a finished turn shows the next prompt and scores, as run_turn and finished_turn decide it.
json outcome(const json& request) {
  const auto parse_error = optional_string(request, "parse_error");
  const auto policy_error = optional_string(request, "policy_error");
  if (policy_error) return {{"feedback", no_response_line(*policy_error)}, {"score", 0.0}, {"correct", false}, {"speedup", nullptr}};
  if (parse_error) {
    return {{"feedback", feedback_line(parse_error, eval::EvalResult{})}, {"score", 0.0}, {"correct", false}, {"speedup", nullptr}};
  }
  if (!request.contains("result") || !request["result"].is_object()) {
    throw FieldError{"result: a `kernelrl eval --json` record is required when neither parse_error nor policy_error is given"};
  }
  if (request["result"].contains("could_not_evaluate")) {
    throw FieldError{"result: the candidate could not be evaluated: " + request["result"]["could_not_evaluate"].dump()};
  }
  eval::EvalResult result;
  try {
    result = request["result"].get<eval::EvalResult>();
  } catch (const json::exception& e) {
    throw FieldError{std::string("result: not a result record: ") + e.what()};
  }
  const TurnScore s = score_turn(result, score_config(request));
  return {{"feedback", feedback_line(std::nullopt, result)},
          {"score", s.score},
          {"correct", s.correct},
          {"speedup", s.speedup ? json(*s.speedup) : json(nullptr)}};
}

// Returns and advantages of one task's group, as the rollout credits trajectories without branching.
json credit(const json& request) {
  const auto scores = field<std::vector<std::vector<double>>>(request, "scores");
  rl::ReturnConfig returns;
  returns.gamma = field<double>(request, "gamma", returns.gamma);
  if (!(returns.gamma >= 0)) throw FieldError{"gamma: must not be negative"};
  const auto return_kind = field<std::string>(request, "return", std::string("sum"));
  if (return_kind != "sum" && return_kind != "max") throw FieldError{"return: '" + return_kind + "' is not one of sum, max"};
  returns.kind = return_kind == "max" ? rl::ReturnKind::DISCOUNTED_MAX : rl::ReturnKind::DISCOUNTED_SUM;
  rl::AdvantageConfig advantage;
  auto kind = rl::parse_advantage_kind(field<std::string>(request, "advantage", rl::to_string(advantage.kind)));
  if (!kind) throw FieldError{"advantage: " + kind.error().message};
  advantage.kind = *kind;
  advantage.divide_by_std = field<bool>(request, "divide_by_std", advantage.divide_by_std);
  advantage.eps = field<double>(request, "eps", advantage.eps);
  TaskTurns turns;
  turns.scores = scores;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    turns.from.emplace_back();
    for (std::size_t t = 0; t < scores[j].size(); ++t) {
      turns.from[j].push_back(t == 0 ? std::nullopt : std::optional<TurnRef>(TurnRef{static_cast<int>(j), static_cast<int>(t)}));
    }
  }
  const TaskCredit c = assign_credit(turns, returns, advantage);
  // Every turn given here was answered, so every value is present; an absent one would be null.
  auto values = [](const std::vector<std::vector<std::optional<double>>>& rows) {
    json out = json::array();
    for (const auto& row : rows) {
      json r = json::array();
      for (const auto& v : row) r.push_back(v ? json(*v) : json(nullptr));
      out.push_back(std::move(r));
    }
    return out;
  };
  return {{"returns", values(c.returns)}, {"advantages", values(c.advantages)}};
}

}  // namespace

common::Expected<const PromptTemplates*> EnvProtocol::templates(common::Format format, const fs::path& dir,
                                                                 const fs::path& example) {
  const auto key = std::make_tuple(static_cast<int>(format), dir.string(), example.string());
  if (auto it = templates_.find(key); it != templates_.end()) return &it->second;
  auto loaded = load_templates(dir, format, example);
  if (!loaded) return loaded.error();
  return &templates_.emplace(key, std::move(*loaded)).first->second;
}

json EnvProtocol::prompt(const json& request) {
  const common::Format format = format_field(request);
  // The defaults of `kernelrl rollout` (rollout::resolve, PromptConfig).
  RolloutConfig defaults;
  defaults.tasks = {"-"};
  defaults.out_dir = "-";
  defaults.format = format;
  defaults.templates_dir = field<std::string>(request, "prompts_dir", std::string());
  defaults.example_file = field<std::string>(request, "example", std::string());
  auto resolved = resolve(defaults);
  if (!resolved) throw FieldError{resolved.error().message};
  auto t = templates(format, resolved->templates_dir, resolved->example_file);
  if (!t) throw FieldError{"prompts_dir/example: " + t.error().message};

  PromptConfig config;
  config.gpu = field<std::string>(request, "gpu", config.gpu);
  config.max_chars = field<std::size_t>(request, "max_chars", config.max_chars);
  const int turn = field<int>(request, "turn");
  if (turn < 1) throw FieldError{"turn: " + std::to_string(turn) + " is not a turn number (1 is the first)"};
  std::vector<Attempt> previous;
  const json list = request.value("previous", json::array());
  if (!list.is_array()) throw FieldError{"previous: must be a list of {code, summary, feedback}"};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "previous[" + std::to_string(i) + "].";
    if (!list[i].is_object()) throw FieldError{"previous[" + std::to_string(i) + "]: must be an object"};
    try {
      previous.push_back({field<std::string>(list[i], "code", std::string()), field<std::string>(list[i], "summary", std::string()),
                          field<std::string>(list[i], "feedback")});
    } catch (const FieldError& e) {
      throw FieldError{where + e.message};
    }
  }
  const BuiltPrompt p = build_prompt(**t, field<std::string>(request, "task_source"), previous, config);
  json messages = json::array();
  for (const auto& m : p.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"messages", messages}, {"n_attempts_shown", p.n_attempts_shown}, {"n_attempts_dropped", p.n_attempts_dropped}};
}

json EnvProtocol::handle(const json& request) {
  json answer;
  try {
    if (!request.is_object()) throw FieldError{"a request is a JSON object with an \"op\""};
    const auto op = field<std::string>(request, "op");
    if (op == "prompt") answer = prompt(request);
    else if (op == "parse") answer = parse(request);
    else if (op == "outcome") answer = outcome(request);
    else if (op == "credit") answer = credit(request);
    else throw FieldError{"op: '" + op + "' is not one of prompt, parse, outcome, credit"};
  } catch (const FieldError& e) {
    answer = {{"error", e.message}};
  }
  if (request.is_object() && request.contains("id")) answer["id"] = request["id"];
  return answer;
}

int run_env_protocol(std::istream& in, std::ostream& out) {
  EnvProtocol protocol;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json request;
    try {
      request = json::parse(line);
    } catch (const json::parse_error& e) {
      out << json{{"error", std::string("the request is not JSON: ") + e.what()}}.dump() << "\n" << std::flush;
      continue;
    }
    out << protocol.handle(request).dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}

}  // namespace kernelrl::rollout
