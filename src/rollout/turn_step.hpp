// One turn of one trajectory: build the prompt from the earlier attempts, ask the policy, parse
// the answer, write the kernel into the run directory, evaluate it and score it.
#pragma once

#include <optional>
#include <vector>

#include "common/expected.hpp"
#include "rollout/evaluator.hpp"
#include "policy/policy.hpp"
#include "rollout/prompt.hpp"
#include "rollout/rollout_config.hpp"
#include "task/selection.hpp"
#include "rollout/finished_turn.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::rollout {

// What every turn of a run shares; all of it outlives the run.
struct TurnContext {
  const RolloutConfig& config;
  const PromptTemplates& templates;
  policy::Policy& policy;
  Evaluator& evaluator;
  std::optional<policy::TokenBudget> token_budget;  // the prompt limit in the policy's tokens, when it counts them
};

// The token budget of a run: the policy's own, lowered to config.max_tokens when that is set.
// Errors: config.max_tokens set for a policy that cannot count its tokens.
common::Expected<std::optional<policy::TokenBudget>> token_budget(const PromptConfig& config, const policy::Policy& policy);

struct TurnInput {
  const task::SelectedTask& task;
  int trajectory = 0;
  int turn = 1;
  std::optional<TurnRef> parent;  // recorded for beam search
  std::vector<Attempt> previous;  // the lineage's earlier turns, oldest first
};

// The score of an evaluated turn and what it records: correct, and a speedup only for a correct
// kernel that was timed (speedup > 0).
struct TurnScore {
  bool correct = false;
  std::optional<double> speedup;
  double score = 0;
};
TurnScore score_turn(const eval::EvalResult& result, const rl::ScoreConfig& config);

// Runs one turn; the record's return and advantage stay empty. A prompt over the token budget even
// without earlier attempts is never sent: outcome PROMPT_TOO_LONG, score 0, credited with nothing.
// A parse error (PARSE_ERROR) scores 0 and is not evaluated. A policy that fails after its retries
// gives POLICY_ERROR and score 0 (the runner counts consecutive ones). An Error (candidate not writable, engine could
// not evaluate) means no turn happened. Thread-safe when the policy and the evaluator are.
common::Expected<trajectory::TurnRecord> run_turn(const TurnContext& context, const TurnInput& input);

}  // namespace kernelrl::rollout
