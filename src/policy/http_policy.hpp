// HttpPolicy: a Policy served by an OpenAI-compatible chat-completions server (vLLM, SGLang,
// llama.cpp's server, hosted APIs) through policy::ChatClient. Built only when cpp-httplib is
// (library kernelrl_policy_http).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "policy/chat_client.hpp"
#include "policy/policy.hpp"

namespace kernelrl::policy {

// The sampled token ids, when the server wrote each log-probability's token as "token_id:N" (vLLM's
// return_tokens_as_token_ids, asked for by ChatClientConfig::token_ids); none otherwise (plain
// chat completions name tokens by their text, which does not map back to ids).
std::optional<std::vector<std::int64_t>> token_ids_of(const std::vector<policy::TokenLogprob>& tokens);

class HttpPolicy final : public Policy {
 public:
  // Fails on a base URL the client cannot use, naming it.
  static common::Expected<std::unique_ptr<HttpPolicy>> create(policy::ChatClientConfig config);

  // One chat completion; retries and the in-flight limit are the client's. Thread-safe.
  common::Expected<PolicyResponse> generate(const std::vector<common::Message>& messages) override;

  // {"kind": "http", base_url, model, temperature, top_p, max_tokens, logprobs, token_ids}
  nlohmann::json describe() const override;

 private:
  explicit HttpPolicy(std::unique_ptr<policy::ChatClient> client) : client_(std::move(client)) {}
  std::unique_ptr<policy::ChatClient> client_;
};

}  // namespace kernelrl::policy
