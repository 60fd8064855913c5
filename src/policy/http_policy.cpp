#include "policy/http_policy.hpp"

namespace kernelrl::policy {

std::optional<std::vector<std::int64_t>> token_ids_of(const std::vector<policy::TokenLogprob>& tokens) {
  constexpr std::string_view kPrefix = "token_id:";
  std::vector<std::int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) {
    if (t.token.rfind(kPrefix, 0) != 0 || t.token.size() == kPrefix.size()) return std::nullopt;
    std::int64_t id = 0;
    for (char c : std::string_view(t.token).substr(kPrefix.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      id = id * 10 + (c - '0');
    }
    ids.push_back(id);
  }
  return ids;
}

common::Expected<std::unique_ptr<HttpPolicy>> HttpPolicy::create(policy::ChatClientConfig config) {
  auto client = policy::ChatClient::create(std::move(config));
  if (!client) return client.error();
  return std::unique_ptr<HttpPolicy>(new HttpPolicy(std::move(*client)));
}

common::Expected<PolicyResponse> HttpPolicy::generate(const std::vector<common::Message>& messages) {
  auto reply = client_->complete(messages);
  if (!reply) return reply.error();
  PolicyResponse r;
  r.content = std::move(reply->content);
  r.reasoning = std::move(reply->reasoning);
  r.finish_reason = std::move(reply->finish_reason);
  if (!reply->logprobs.empty()) {
    r.logprobs.emplace();
    for (const auto& t : reply->logprobs) r.logprobs->push_back(t.logprob);
    r.token_ids = token_ids_of(reply->logprobs);
  }
  r.latency_ms = reply->latency_s * 1000.0;
  return r;
}

nlohmann::json HttpPolicy::describe() const {
  const auto& c = client_->config();
  return {{"kind", "http"},          {"base_url", c.base_url},       {"model", c.model},
          {"temperature", c.temperature}, {"top_p", c.top_p},         {"max_tokens", c.max_tokens},
          {"logprobs", c.logprobs}, {"token_ids", c.token_ids}};
}

}  // namespace kernelrl::policy
