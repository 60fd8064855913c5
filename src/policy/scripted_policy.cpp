#include "policy/scripted_policy.hpp"

#include <cassert>
#include <memory>

namespace kernelrl::policy {

ScriptedPolicy::ScriptedPolicy(Script script, std::string name) : script_(std::move(script)), name_(std::move(name)) {}

ScriptedPolicy ScriptedPolicy::from_list(std::vector<std::string> contents, std::string name) {
  assert(!contents.empty());
  auto shared = std::make_shared<const std::vector<std::string>>(std::move(contents));
  return ScriptedPolicy(
      [shared](const std::vector<common::Message>&, int call_index) -> common::Expected<PolicyResponse> {
        PolicyResponse r;
        r.content = (*shared)[static_cast<std::size_t>(call_index) % shared->size()];
        r.finish_reason = "stop";
        return r;
      },
      std::move(name));
}

common::Expected<PolicyResponse> ScriptedPolicy::generate(const std::vector<common::Message>& messages) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int index = n_calls_++;
  if (budget_) {
    const std::size_t n = budget_->count(messages);
    if (n > budget_->max_tokens) {
      return common::make_error("the prompt has " + std::to_string(n) + " tokens, more than the context allows (" +
                                std::to_string(budget_->max_tokens) + ")");
    }
  }
  return script_(messages, index);
}

void ScriptedPolicy::set_token_budget(TokenBudget budget) {
  std::lock_guard<std::mutex> lock(mutex_);
  budget_ = std::move(budget);
}

std::optional<TokenBudget> ScriptedPolicy::token_budget() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return budget_;
}

nlohmann::json ScriptedPolicy::describe() const { return {{"kind", "scripted"}, {"name", name_}}; }

int ScriptedPolicy::n_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return n_calls_;
}

}  // namespace kernelrl::policy
