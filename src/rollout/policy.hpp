// The policy a rollout samples from: the prompt's messages in, one response out. Implementations:
// HttpPolicy (http_policy.hpp, an OpenAI-compatible server; built only with cpp-httplib) and
// ScriptedPolicy (scripted_policy.hpp, the deterministic test double).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "rollout/prompt.hpp"

namespace kernelrl::rollout {

struct PolicyResponse {
  std::string content;                                // the full message text (may hold <think> tags)
  std::string reasoning;                              // a separate reasoning field, "" when none
  std::string finish_reason;                          // "stop", "length", ...
  std::optional<std::vector<std::int64_t>> token_ids; // sampled token ids, when the policy exposes them
  std::optional<std::vector<double>> logprobs;        // log-probability of each sampled token, when returned
  double latency_ms = 0;                              // wall time of the call, retries included
};

class Policy {
 public:
  virtual ~Policy() = default;

  // One response to `messages`. Called from many rollout threads at once, so implementations are
  // thread-safe. An Error means no response at all (server down after retries) and names the cause.
  virtual common::Expected<PolicyResponse> generate(const std::vector<Message>& messages) = 0;

  // What run.json records about the policy (kind, model, sampling settings); a resumed run must
  // describe its policy the same way.
  virtual nlohmann::json describe() const = 0;

  // The policy's prompt limit in its own tokens; none when it cannot count them (an HTTP server,
  // whose tokenizer is not known here: the character budget applies alone).
  virtual std::optional<TokenBudget> token_budget() const { return std::nullopt; }
};

}  // namespace kernelrl::rollout
