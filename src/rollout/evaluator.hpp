// What the rollout runner evaluates candidates with: a narrow interface over eval::Engine, so that
// benchmarks and tests can put a stub in its place. EngineEvaluator (the engine itself) is what
// `kernelrl rollout` uses and what RolloutRunner wraps when given an Engine.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "eval/engine.hpp"

namespace kernelrl::rollout {

class Evaluator {
 public:
  virtual ~Evaluator() = default;

  // Evaluates one candidate file. An Error means "could not evaluate" (a broken task), which stops
  // the rollout; a bad candidate is a result, not an Error. Called from many threads at once.
  virtual common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) = 0;

  // The device results are measured on ("cuda", "cpu"); run.json records it.
  virtual std::string device() const = 0;

  // What its results depend on besides the candidate and task (options, rules, device, GPU): a run
  // records it and refuses to resume with another.
  virtual nlohmann::json settings() const { return {{"device", device()}}; }
};

// The evaluation engine as an Evaluator; the engine is shared, not owned.
class EngineEvaluator final : public Evaluator {
 public:
  explicit EngineEvaluator(eval::Engine& engine) : engine_(engine) {}
  common::Expected<eval::EvalResult> evaluate(const eval::EvalJob& job) override { return engine_.evaluate(job); }
  std::string device() const override { return engine_.device(); }
  nlohmann::json settings() const override;

 private:
  eval::Engine& engine_;
};

}  // namespace kernelrl::rollout
