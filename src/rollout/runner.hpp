// The rollout engine (DESIGN.md, "Episode"): for every task, m trajectories of n turns (or the
// strategy's shape), each turn prompted with the lineage's earlier attempts, evaluated by the
// engine and scored; when a task's trajectories are complete, returns and advantages. Worker
// threads take (task, trajectory) units so that generation and evaluation overlap. Each finished
// turn is appended to trajectories.jsonl at once; a rerun on the same run directory resumes.
#pragma once

#include "common/expected.hpp"
#include <memory>

#include "eval/engine.hpp"
#include "rollout/evaluator.hpp"
#include "policy/policy.hpp"
#include "rollout/rollout_config.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::rollout {

struct RolloutSummary {
  bool resumed = false;       // the run directory held an earlier run
  int n_tasks = 0;
  int n_turns_total = 0;      // tasks x trajectories x turns
  int n_turns_found = 0;      // finished by an earlier run, not redone
  int n_turns_run = 0;        // finished by this run
  int n_correct_run = 0;      // of those, correct
  int n_parse_errors_run = 0; // of those, not parsable (never evaluated)
  int n_policy_errors_run = 0; // of those, no response from the policy after its retries (score 0)
  int n_prompts_too_long_run = 0; // of those, prompts over the policy's token budget (never sent, not credited)
  int n_tasks_credited = 0;   // tasks whose returns and advantages this run wrote
  int n_policy_errors_resampled = 0; // turns an earlier run got no response to, sampled again (with what followed)
};

class RolloutRunner {
 public:
  // `policy` and `engine` are shared, not owned; both outlive the runner.
  RolloutRunner(RolloutConfig config, policy::Policy& policy, eval::Engine& engine);
  // The same with any evaluator (a stub in benchmarks); shared, not owned.
  RolloutRunner(RolloutConfig config, policy::Policy& policy, Evaluator& evaluator);

  // Runs or resumes the rollout in config.out_dir. Errors: a bad configuration (naming the
  // field), a run directory whose run.json differs (naming the field), unreadable tasks,
  // templates or trajectories; and the first infrastructure failure during the run (engine could
  // not evaluate, disk full, or config.max_policy_failures consecutive turns the policy gave no
  // response to), after which the turns in flight finish and are kept so that rerunning resumes.
  // A single turn the policy fails is a finished turn with `policy_error` and score 0.
  // When `records` is given it receives every finished turn's record of the run directory (what
  // reading trajectories.jsonl back gives: returns and advantages applied), earlier runs' first in
  // file order, then this run's in the order they finished; on an Error, those finished so far.
  common::Expected<RolloutSummary> run(std::vector<trajectory::TurnRecord>* records = nullptr);

 private:
  RolloutConfig config_;
  policy::Policy& policy_;
  std::unique_ptr<Evaluator> owned_evaluator_;  // the engine's wrapper, when given an engine
  Evaluator& evaluator_;
};

}  // namespace kernelrl::rollout
