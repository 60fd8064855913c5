// HttpPolicy: a Policy served by an OpenAI-compatible chat-completions server (vLLM, SGLang,
// llama.cpp's server, hosted APIs) through policy::ChatClient. Built only when cpp-httplib is
// (library kernelrl_rollout_http).
#pragma once

#include <memory>

#include "policy/chat_client.hpp"
#include "rollout/policy.hpp"

namespace kernelrl::rollout {

class HttpPolicy final : public Policy {
 public:
  // Fails on a base URL the client cannot use, naming it.
  static common::Expected<std::unique_ptr<HttpPolicy>> create(policy::ChatClientConfig config);

  // One chat completion; retries and the in-flight limit are the client's. Thread-safe.
  common::Expected<PolicyResponse> generate(const std::vector<Message>& messages) override;

  // {"kind": "http", base_url, model, temperature, top_p, max_tokens, logprobs}
  nlohmann::json describe() const override;

 private:
  explicit HttpPolicy(std::unique_ptr<policy::ChatClient> client) : client_(std::move(client)) {}
  std::unique_ptr<policy::ChatClient> client_;
};

}  // namespace kernelrl::rollout
