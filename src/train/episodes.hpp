// The training samples of one rollout step are its trajectory records (trajectory/record.hpp),
// taken from the rollout in memory: the prompt the model saw (earlier thoughts already dropped by
// the prompt builder), the tokens it sampled and the turn's advantage. What the step log reports
// about them is decided here.
#pragma once

#include <vector>

#include "trajectory/record.hpp"

namespace kernelrl::train {

// A response the step log counts as degenerate: none at all (no tokens recorded), unparsable, no
// response from the policy, or cut at the token limit. A prompt that was never sent is not the
// model's answer: see is_unanswered.
bool is_degenerate(const trajectory::TurnRecord& turn);

// The prompt did not fit the policy's context: no response, no score, no advantage.
bool is_unanswered(const trajectory::TurnRecord& turn);

}  // namespace kernelrl::train
