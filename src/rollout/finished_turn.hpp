// What the runner keeps of a finished turn (its place, the attempt later prompts show, its score),
// taken from its trajectory record (trajectory/record.hpp) whether it was just run or read back
// from an earlier run.
#pragma once

#include <optional>
#include <string>

#include "common/expected.hpp"
#include "rollout/prompt.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::rollout {

using trajectory::TurnRef;

struct FinishedTurn {
  std::string task;
  TurnRef ref;
  std::optional<TurnRef> parent;
  Attempt attempt;  // code, summary and the feedback line later prompts show
  bool correct = false;
  double score = 0;
  bool credited = false;      // return and advantage present (after updates)
  bool policy_error = false;  // the turn has no response: the policy failed after its retries
  bool unanswered = false;    // the prompt did not fit: not an attempt, not credited (prompt_error)
};

// The runner's view of `record`. An Error names the field at fault: a record with neither a result
// nor an error (nothing to show later prompts), or a result that is not an engine result record.
common::Expected<FinishedTurn> finished_turn(const trajectory::TurnRecord& record);

// The turn `ref` continues: none for turn 1, else `parent` (beam) or the trajectory's previous turn.
std::optional<TurnRef> continues_from(TurnRef ref, const std::optional<TurnRef>& parent);

}  // namespace kernelrl::rollout
