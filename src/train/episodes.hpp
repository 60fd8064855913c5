// The training samples of one rollout step are its trajectory records (trajectory/record.hpp),
// taken from the rollout in memory: the prompt the model saw (earlier thoughts already dropped by
// the prompt builder), the tokens it sampled and the turn's advantage. What the step log reports
// about them is decided here.
#pragma once

#include <vector>

#include "trajectory/record.hpp"

namespace kernelrl::train {

// A response the step log counts as degenerate: none at all (no tokens recorded), unparsable, or
// cut at the token limit. A prompt that was never sent is not the
// model's answer: see is_unanswered.
bool is_degenerate(const trajectory::TurnRecord& turn);

// Not the model's answer: the prompt did not fit the policy's context, or the policy gave no
// response (an infrastructure failure). No score, no advantage; left out of the step's statistics.
bool is_unanswered(const trajectory::TurnRecord& turn);

// Of those, the turns the policy gave no response to.
bool is_no_response(const trajectory::TurnRecord& turn);

}  // namespace kernelrl::train
