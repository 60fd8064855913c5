// The policy a rollout samples from: the prompt's messages in, one response out. Implementations,
// all in this folder: HttpPolicy (http_policy.hpp, an OpenAI-compatible server; built only with
// cpp-httplib), LocalPolicy (local_policy.hpp, the in-process model the trainer updates) and
// ScriptedPolicy (scripted_policy.hpp, the deterministic test double).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/message.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::policy {

// A policy's answer, as the trajectory records it (content, reasoning, finish reason, tokens,
// log-probs, latency).
using PolicyResponse = trajectory::Response;

// A prompt limit in a policy's own tokens: the most a prompt may take (its context less the room
// kept for the response), and how many `messages` take once rendered as its prompt.
struct TokenBudget {
  std::size_t max_tokens = 0;
  std::function<std::size_t(const std::vector<common::Message>&)> count;  // thread-safe
};

class Policy {
 public:
  virtual ~Policy() = default;

  // One response to `messages`. Called from many rollout threads at once, so implementations are
  // thread-safe. An Error means no response at all (server down after retries) and names the cause.
  virtual common::Expected<PolicyResponse> generate(const std::vector<common::Message>& messages) = 0;

  // What run.json records about the policy (kind, model, sampling settings); a resumed run must
  // describe its policy the same way.
  virtual nlohmann::json describe() const = 0;

  // The policy's prompt limit in its own tokens; none when it cannot count them (an HTTP server,
  // whose tokenizer is not known here: the character budget applies alone).
  virtual std::optional<TokenBudget> token_budget() const { return std::nullopt; }
};

}  // namespace kernelrl::policy
