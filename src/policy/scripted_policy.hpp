// ScriptedPolicy: a test double for rollouts. It answers from a script (a function of the prompt
// and the call's index) instead of a model, so tests can drive the runner deterministically and
// count the calls made. Never used by `kernelrl rollout`.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace kernelrl::policy {

class ScriptedPolicy final : public Policy {
 public:
  // `call_index` counts calls from 0 in the order they arrive (refused ones included).
  using Script = std::function<common::Expected<PolicyResponse>(const std::vector<common::Message>& messages, int call_index)>;

  explicit ScriptedPolicy(Script script, std::string name = "scripted");

  // Answers call i with contents[i % contents.size()] (finish reason "stop"); `contents` is not empty.
  static ScriptedPolicy from_list(std::vector<std::string> contents, std::string name = "scripted");

  // Calls the script under a lock: calls are serialised, so a script needs no locking of its own.
  common::Expected<PolicyResponse> generate(const std::vector<common::Message>& messages) override;

  nlohmann::json describe() const override;  // {"kind": "scripted", "name": NAME}

  // Gives the policy a context in tokens, as a model has: token_budget() returns `budget`, and
  // generate() refuses a prompt over it with an Error (without calling the script), as a server
  // would. None by default.
  void set_token_budget(TokenBudget budget);
  std::optional<TokenBudget> token_budget() const override;

  int n_calls() const;  // generate() calls so far

 private:
  Script script_;
  std::string name_;
  mutable std::mutex mutex_;
  int n_calls_ = 0;
  std::optional<TokenBudget> budget_;
};

}  // namespace kernelrl::policy
