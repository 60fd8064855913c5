#include "rollout/turn_step.hpp"

#include <algorithm>

#include "common/fs.hpp"
#include "rollout/response_parser.hpp"
#include "rollout/run_dir.hpp"

namespace kernelrl::rollout {

namespace fs = std::filesystem;
using common::make_error;

namespace {

// Evaluates `code` as this turn's candidate file.
common::Expected<eval::EvalResult> evaluate_code(const TurnContext& context, const TurnInput& input, const std::string& code) {
  const fs::path file =
      candidate_path(context.config.out_dir, context.config.format, input.task.id, input.trajectory, input.turn);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return make_error(file.parent_path().string() + ": cannot create: " + ec.message());
  if (auto written = common::write_file_atomic(file, code); !written) return written.error();
  auto result = context.evaluator.evaluate(
      {input.task.path, file, context.config.format, std::nullopt, std::nullopt, std::nullopt});
  if (!result) return make_error(input.task.path.string() + ": could not evaluate " + file.string() + ": " + result.error().message);
  return result;
}

}  // namespace

TurnScore score_turn(const eval::EvalResult& result, const rl::ScoreConfig& config) {
  TurnScore s;
  s.correct = result.correct;
  if (s.correct && result.speedup > 0) s.speedup = result.speedup;
  s.score = rl::score(s.correct, s.speedup.value_or(0.0), config);
  return s;
}

common::Expected<std::optional<policy::TokenBudget>> token_budget(const PromptConfig& config, const policy::Policy& policy) {
  std::optional<policy::TokenBudget> budget = policy.token_budget();
  if (config.max_tokens == 0) return budget;
  if (!budget) {
    return make_error("prompt max tokens " + std::to_string(config.max_tokens) +
                      ": this policy cannot count its tokens (the in-process policy can); bound the prompt in characters instead");
  }
  budget->max_tokens = std::min(budget->max_tokens, config.max_tokens);
  return budget;
}

common::Expected<trajectory::TurnRecord> run_turn(const TurnContext& context, const TurnInput& input) {
  using trajectory::TurnOutcome;
  const RolloutConfig& config = context.config;
  trajectory::TurnRecord r;
  r.task = input.task.path.string();
  r.task_id = input.task.id;
  r.level = input.task.level;
  r.split = input.task.split;
  r.trajectory = input.trajectory;
  r.turn = input.turn;
  r.parent = input.parent;
  r.return_kind = rl::to_string(config.returns.kind);
  r.advantage_kind = rl::to_string(config.advantage.kind);
  BuiltPrompt prompt = build_prompt(context.templates, input.task.source, input.previous, config.prompt,
                                    context.token_budget ? &*context.token_budget : nullptr);
  r.messages = std::move(prompt.messages);
  if (!prompt.fits) {  // the policy would refuse it: not the model's failure, so not its outcome
    r.outcome = TurnOutcome::PROMPT_TOO_LONG;
    r.error = "the prompt takes " + std::to_string(*prompt.n_tokens) +
                     " tokens without any earlier attempt, more than the budget of " +
                     std::to_string(context.token_budget->max_tokens) + " (the context less the response's room)";
    return r;
  }

  auto response = context.policy.generate(r.messages);
  if (!response) {  // a finished turn without a response: score 0, the trajectory goes on
    r.outcome = TurnOutcome::POLICY_ERROR;
    r.error = response.error().message;
    r.score = 0;
    return r;
  }
  r.response = std::move(*response);

  const ParsedResponse parsed = parse_response(r.response.content, r.response.reasoning, config.format, config.lenient_parse);
  if (r.response.reasoning.empty()) r.response.reasoning = parsed.thoughts;  // thoughts from <think> tags
  if (!parsed.ok) {
    r.outcome = TurnOutcome::PARSE_ERROR;
    r.error = parsed.error;
    r.score = 0;
    return r;
  }
  r.code = parsed.code;
  r.summary = parsed.summary;
  auto result = evaluate_code(context, input, parsed.code);
  if (!result) return result.error();
  const TurnScore scored = score_turn(*result, config.score);
  r.correct = scored.correct;
  r.speedup = scored.speedup;
  r.score = scored.score;
  r.outcome = TurnOutcome::EVALUATED;
  r.result = nlohmann::json(*result);
  return r;
}

}  // namespace kernelrl::rollout
