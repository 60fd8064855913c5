#include "policy/chat_client.hpp"

#include <httplib.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace kernelrl::policy {

namespace {

using clock_type = std::chrono::steady_clock;

// "https://api.example.com/v1" -> {"https://api.example.com", "/v1"}
bool split_url(const std::string& url, std::string& origin, std::string& prefix) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  auto path_start = url.find('/', scheme_end + 3);
  origin = url.substr(0, path_start);
  prefix = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return scheme_end > 0 && origin.size() > scheme_end + 3;
}

bool retryable(int status) { return status == 408 || status == 429 || status >= 500; }

std::string excerpt(const std::string& body) { return body.size() > 300 ? body.substr(0, 300) + "..." : body; }

}  // namespace

nlohmann::json chat_request_body(const ChatClientConfig& config, const std::vector<ChatMessage>& messages) {
  nlohmann::json msgs = nlohmann::json::array();
  for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
  nlohmann::json body = {{"model", config.model},       {"messages", msgs},          {"temperature", config.temperature},
                         {"top_p", config.top_p},       {"max_tokens", config.max_tokens}};
  if (config.logprobs) body["logprobs"] = true;
  if (config.logprobs && config.token_ids) body["return_tokens_as_token_ids"] = true;
  return body;
}

common::Expected<ChatResponse> parse_chat_response(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return common::make_error("the response is not JSON: " + excerpt(body));
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
    return common::make_error("the response has no choices: " + excerpt(body));
  }
  const auto& choice = j["choices"][0];
  if (!choice.contains("message") || !choice["message"].is_object()) {
    return common::make_error("the response's first choice has no message: " + excerpt(body));
  }
  const auto& message = choice["message"];
  ChatResponse r;
  if (message.contains("content") && message["content"].is_string()) r.content = message["content"].get<std::string>();
  for (const char* field : {"reasoning_content", "reasoning"}) {
    if (message.contains(field) && message[field].is_string()) r.reasoning = message[field].get<std::string>();
  }
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    r.finish_reason = choice["finish_reason"].get<std::string>();
  }
  if (choice.contains("logprobs") && choice["logprobs"].is_object() && choice["logprobs"].contains("content") &&
      choice["logprobs"]["content"].is_array()) {
    for (const auto& t : choice["logprobs"]["content"]) {
      r.logprobs.push_back({t.value("token", ""), t.value("logprob", 0.0)});
    }
  }
  if (j.contains("usage") && j["usage"].is_object()) {
    r.prompt_tokens = j["usage"].value("prompt_tokens", 0);
    r.completion_tokens = j["usage"].value("completion_tokens", 0);
  }
  return r;
}

common::Expected<std::unique_ptr<ChatClient>> ChatClient::create(ChatClientConfig config) {
  std::unique_ptr<ChatClient> c(new ChatClient(std::move(config)));
  std::string prefix;
  if (!split_url(c->config_.base_url, c->scheme_host_port_, prefix)) {
    return common::make_error("base URL '" + c->config_.base_url + "' is not of the form http[s]://host[:port][/path]");
  }
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  if (c->config_.base_url.rfind("https://", 0) == 0) {
    return common::make_error("base URL '" + c->config_.base_url + "': this build has no TLS support (OpenSSL)");
  }
#endif
  c->path_ = prefix + "/chat/completions";
  if (const char* key = std::getenv(c->config_.api_key_env.c_str())) c->api_key_ = key;
  if (c->config_.max_in_flight < 1) c->config_.max_in_flight = 1;
  return c;
}

common::Expected<ChatResponse> ChatClient::complete(const std::vector<ChatMessage>& messages) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    slot_free_.wait(lock, [&] { return in_flight_ < config_.max_in_flight; });
    ++in_flight_;
  }
  struct Release {
    ChatClient* c;
    ~Release() {
      {
        std::lock_guard<std::mutex> lock(c->mutex_);
        --c->in_flight_;
      }
      c->slot_free_.notify_one();
    }
  } release{this};

  const std::string url = scheme_host_port_ + path_;
  const std::string body = chat_request_body(config_, messages).dump();
  httplib::Headers headers;
  if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
  const auto t0 = clock_type::now();
  const auto timeout = std::chrono::duration<double>(config_.timeout_s);
  double backoff_s = config_.backoff_initial_s;
  std::string last_error;
  for (int attempt = 1; attempt <= config_.max_retries + 1; ++attempt) {
    httplib::Client client(scheme_host_port_);
    client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    auto res = client.Post(path_, headers, body, "application/json");
    double wait_s = backoff_s;
    if (!res) {
      last_error = "no response (" + httplib::to_string(res.error()) + ")";
    } else if (res->status == 200) {
      auto parsed = parse_chat_response(res->body);
      if (!parsed) return common::make_error(url + ": " + parsed.error().message);
      parsed->attempts = attempt;
      parsed->latency_s = std::chrono::duration<double>(clock_type::now() - t0).count();
      return parsed;
    } else if (!retryable(res->status)) {
      return common::make_error(url + ": HTTP " + std::to_string(res->status) + ": " + excerpt(res->body));
    } else {
      last_error = "HTTP " + std::to_string(res->status) + ": " + excerpt(res->body);
      if (res->has_header("Retry-After")) wait_s = std::max(wait_s, std::atof(res->get_header_value("Retry-After").c_str()));
    }
    if (attempt <= config_.max_retries) {
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wait_s, config_.backoff_max_s)));
      backoff_s = std::min(backoff_s * 2, config_.backoff_max_s);
    }
  }
  return common::make_error(url + ": gave up after " + std::to_string(config_.max_retries + 1) + " attempts; last: " +
                            last_error);
}

}  // namespace kernelrl::policy
