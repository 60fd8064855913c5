#include "rollout/finished_turn.hpp"

#include <nlohmann/json.hpp>

namespace kernelrl::rollout {

using common::make_error;
using trajectory::TurnOutcome;

common::Expected<FinishedTurn> finished_turn(const trajectory::TurnRecord& r) {
  FinishedTurn t;
  t.task = r.task;
  t.ref = r.ref();
  t.parent = r.parent;
  t.attempt.code = r.code.value_or("");
  t.attempt.summary = r.summary;
  switch (r.outcome) {
    case TurnOutcome::NO_RESULT:
      return make_error("field `result` is null but none of `parse_error`, `policy_error`, `prompt_error` is set");
    case TurnOutcome::POLICY_ERROR:
      t.attempt.feedback = no_response_line(r.error);
      break;
    case TurnOutcome::PARSE_ERROR:
      t.attempt.feedback = feedback_line(r.error, eval::EvalResult{});
      break;
    case TurnOutcome::PROMPT_TOO_LONG:
      t.attempt.feedback = feedback_line(std::nullopt, eval::EvalResult{});  // never shown: not an attempt
      break;
    case TurnOutcome::EVALUATED:
      try {
        t.attempt.feedback = feedback_line(std::nullopt, r.result->get<eval::EvalResult>());
      } catch (const nlohmann::json::exception& e) {
        return make_error(std::string("field `result` is not a result record: ") + e.what());
      }
      break;
  }
  t.policy_error = r.outcome == TurnOutcome::POLICY_ERROR;
  t.unanswered = r.outcome == TurnOutcome::PROMPT_TOO_LONG;
  t.correct = r.correct;
  t.score = r.score;
  t.credited = r.credited();
  return t;
}

std::optional<TurnRef> continues_from(TurnRef ref, const std::optional<TurnRef>& parent) {
  if (ref.turn <= 1) return std::nullopt;
  return parent ? *parent : TurnRef{ref.trajectory, ref.turn - 1};
}

}  // namespace kernelrl::rollout
