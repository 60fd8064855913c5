#include "train/episodes.hpp"

namespace kernelrl::train {

using trajectory::TurnOutcome;

bool is_unanswered(const trajectory::TurnRecord& turn) {
  return turn.outcome == TurnOutcome::PROMPT_TOO_LONG || is_no_response(turn);
}

bool is_no_response(const trajectory::TurnRecord& turn) { return turn.outcome == TurnOutcome::POLICY_ERROR; }

bool is_degenerate(const trajectory::TurnRecord& turn) {
  if (is_unanswered(turn)) return false;
  const bool no_tokens = !turn.response.token_ids || turn.response.token_ids->empty();
  return no_tokens || turn.outcome == TurnOutcome::PARSE_ERROR || turn.response.finish_reason == "length";
}

}  // namespace kernelrl::train
