// One line of trajectories.jsonl (docs/trajectories.md): a finished turn with its prompt, the
// response, the parsed kernel, the engine's result and the score; return and advantage follow in
// an update record once the task's group is complete. Also reads back what resuming needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "eval/result.hpp"
#include "rollout/policy.hpp"
#include "rollout/prompt.hpp"

namespace kernelrl::rollout {

inline constexpr int kTrajectorySchema = 1;

// A turn of a trajectory: `trajectory` 0-based, `turn` 1-based.
struct TurnRef {
  int trajectory = 0;
  int turn = 1;
  friend bool operator==(const TurnRef&, const TurnRef&) = default;
};

struct TurnRecord {
  std::string task;                  // task file path as given
  std::string task_id;               // file name without .py
  std::optional<int> level;          // from the manifest
  std::optional<std::string> split;  // from the manifest
  int trajectory = 0;
  int turn = 1;
  std::optional<TurnRef> parent;     // beam search: the turn this one continues from
  std::vector<Message> messages;     // the prompt the model saw
  PolicyResponse response;
  std::optional<std::string> code;   // the parsed kernel; none after a parse error
  std::string summary;               // the model's text after the code block
  std::optional<std::string> parse_error;
  std::optional<std::string> policy_error;  // the policy gave no response after its retries (names the URL)
  std::optional<std::string> prompt_error;  // the prompt did not fit the policy's token budget even
                                            // without earlier attempts: never sent, never credited
  std::optional<eval::EvalResult> result;  // none after a parse error or a policy error (never evaluated)
  bool correct = false;
  std::optional<double> speedup;     // when correct and timed
  double score = 0;
  std::optional<double> return_;     // written later, in an update record
  std::optional<double> advantage;   // written later, in an update record
  std::string return_kind;           // "discounted_sum" / "discounted_max"
  std::string advantage_kind;        // "grpo_task", "grpo_per_turn", "leave_one_out_turn"
};

nlohmann::json to_json(const TurnRecord& record);

// The record that completes a turn's return and advantage.
nlohmann::json update_json(const std::string& task, TurnRef turn, double return_, double advantage);

// What the runner keeps of a finished turn: its place, the attempt later prompts show, its score.
struct FinishedTurn {
  std::string task;
  TurnRef ref;
  std::optional<TurnRef> parent;
  Attempt attempt;  // code, summary and the feedback line later prompts show
  bool correct = false;
  double score = 0;
  bool credited = false;  // return and advantage present (after updates)
  bool policy_error = false;  // the turn has no response: the policy failed after its retries
  bool unanswered = false;    // the prompt did not fit: not an attempt, not credited (prompt_error)
};

FinishedTurn finished_turn(const TurnRecord& record);

// Reads a stored full (non-update) record, for resuming; an Error names the field at fault.
common::Expected<FinishedTurn> read_finished_turn(const nlohmann::json& record);

// The turn `ref` continues: none for turn 1, else `parent` (beam) or the trajectory's previous turn.
std::optional<TurnRef> continues_from(TurnRef ref, const std::optional<TurnRef>& parent);

// Whether `record` is an update record ("update": true).
bool is_update(const nlohmann::json& record);

}  // namespace kernelrl::rollout
