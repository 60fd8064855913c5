// The trajectory record (docs/trajectories.md), the one definition of trajectories.jsonl's lines:
// a finished turn (its prompt, the response, the parsed kernel, the engine's result, the score)
// and the update record that later completes its return and advantage. The rollout writes them,
// the report and the trainer read them; nobody else parses the format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/message.hpp"

namespace kernelrl::trajectory {

inline constexpr int kSchema = 1;

// A turn of a trajectory: `trajectory` 0-based, `turn` 1-based.
struct TurnRef {
  int trajectory = 0;
  int turn = 1;
  friend bool operator==(const TurnRef&, const TurnRef&) = default;
};

// One message of a prompt (common/message.hpp).
using Message = common::Message;

// What the policy answered.
struct Response {
  std::string content;                                // the full message text (may hold <think> tags)
  std::string reasoning;                              // a separate reasoning field, "" when none
  std::string finish_reason;                          // "stop", "length", ...
  std::optional<std::vector<std::int64_t>> token_ids; // sampled token ids, when the policy exposes them
  std::optional<std::vector<double>> logprobs;        // log-probability of each sampled token, when returned
  double latency_ms = 0;                              // wall time of the call, retries included
};

// How a turn ended. In the file: which of `prompt_error`, `policy_error`, `parse_error` is set,
// else whether `result` is.
enum class TurnOutcome {
  EVALUATED,        // the engine's result is in `result`
  PARSE_ERROR,      // the response broke the format rules: never evaluated, score 0
  POLICY_ERROR,     // the policy gave no response after its retries (names the URL): score 0, never
                    // credited (no return, no advantage); a resumed run samples it again
  PROMPT_TOO_LONG,  // the prompt did not fit the policy's token budget even without earlier
                    // attempts: never sent, never credited (no return, no advantage)
  NO_RESULT,        // neither a result nor an error (hand-written or pre-release records)
};

// "EVALUATED", "PARSE_ERROR", "POLICY_ERROR", "PROMPT_TOO_LONG", "NO_RESULT".
const char* to_string(TurnOutcome outcome);

struct TurnRecord {
  std::string task;                  // task file path as given (the grouping key)
  std::string task_id;               // file name without .py; from `task` when the record lacks it
  std::optional<int> level;          // from the manifest
  std::optional<std::string> split;  // from the manifest: "train" / "test"
  int trajectory = 0;                // 0-based index within the task
  int turn = 1;                      // 1-based index within the trajectory
  std::optional<TurnRef> parent;     // beam search: the turn this one continues from
  std::vector<Message> messages;     // the prompt the model saw
  Response response;
  std::optional<std::string> code;   // the parsed kernel; none after a parse error
  std::string summary;               // the model's text after the code block
  TurnOutcome outcome = TurnOutcome::NO_RESULT;
  std::string error;                 // the parse, policy or prompt error; "" otherwise
  std::optional<nlohmann::json> result;  // the engine's result record (docs/engine.md, owned by eval)
                                         // when outcome is EVALUATED
  bool correct = false;
  std::optional<double> speedup;     // reference / candidate median time, when correct and timed
  double score = 0;
  std::optional<double> return_;     // completed by an update record
  std::optional<double> advantage;   // completed by an update record
  std::string return_kind;           // "discounted_sum" / "discounted_max"
  std::string advantage_kind;        // "grpo_task", "grpo_per_turn", "leave_one_out_turn"

  TurnRef ref() const { return {trajectory, turn}; }
  // The engine's status when evaluated ("" when the result has none), else to_string(outcome)
  // ("" for NO_RESULT).
  std::string status() const;
  // What went wrong: the parse, policy or prompt error, or the result's error message; "" when none.
  std::string feedback() const;
  // Whether the turn has its return and advantage. A turn without an answer has nothing to credit:
  // a prompt that did not fit, or no response from the policy (an infrastructure failure, which
  // would otherwise read as a wrong answer and shift its group's advantages).
  bool credited() const {
    return outcome == TurnOutcome::PROMPT_TOO_LONG || outcome == TurnOutcome::POLICY_ERROR || (return_ && advantage);
  }
};

// The record that completes a turn's return and advantage ("update": true).
struct TurnUpdate {
  std::string task;
  TurnRef ref;
  std::optional<double> return_;    // none (null or absent): the record's stays as it was
  std::optional<double> advantage;
};

nlohmann::json to_json(const TurnRecord& record);
nlohmann::json to_json(const TurnUpdate& update);

// Whether `line` is an update record ("update": true).
bool is_update(const nlohmann::json& line);

// Reads a full record. Needs `task`, `trajectory` (>= 0), `turn` (>= 1) and `correct`; every other
// field may be absent (records of earlier versions) but must have its type when present. An
// Error names the field.
common::Expected<TurnRecord> read_turn_record(const nlohmann::json& line);

// Reads an update record: `task`, `trajectory`, `turn`, and `return`/`advantage` as numbers or null.
common::Expected<TurnUpdate> read_turn_update(const nlohmann::json& line);

// Applies `update` to `record` (the values it carries).
void apply(const TurnUpdate& update, TurnRecord& record);

}  // namespace kernelrl::trajectory
