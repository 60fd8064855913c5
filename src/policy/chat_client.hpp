// A client for OpenAI-compatible chat-completions servers (vLLM, SGLang, llama.cpp's server,
// hosted APIs): one request per call, retries with exponential backoff on connection errors, 429
// and 5xx (honouring Retry-After), a limit on requests in flight, thoughts from either a reasoning
// field or <think> tags left to the response parser, token log-probabilities when returned.
// Thread-safe: many rollout threads share one client.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "common/message.hpp"

namespace kernelrl::policy {

struct ChatClientConfig {
  std::string base_url = "http://127.0.0.1:8000/v1";  // scheme://host[:port][/prefix]; .../chat/completions is appended
  std::string model;                                  // the server's model name
  std::string api_key_env = "OPENAI_API_KEY";         // environment variable holding the key (may be unset)
  double temperature = 0.9;                           // sampling temperature (Kevin: 0.9)
  double top_p = 1.0;                                 // nucleus sampling mass
  int max_tokens = 8192;                              // generated tokens per response
  bool logprobs = false;                              // ask for per-token log-probabilities
  bool token_ids = false;                             // with logprobs: ask for tokens as "token_id:N"
                                                      // (vLLM's return_tokens_as_token_ids extension)
  int max_in_flight = 64;                             // concurrent requests at most
  double timeout_s = 600;                             // per request (connect + read)
  int max_retries = 4;                                // retries after the first attempt
  double backoff_initial_s = 0.5;                     // first wait; doubles each retry
  double backoff_max_s = 30;                          // longest wait between attempts
};

using ChatMessage = common::Message;  // common/message.hpp

struct TokenLogprob {
  std::string token;
  double logprob = 0;
};

struct ChatResponse {
  std::string content;                 // the message text (may hold <think> tags)
  std::string reasoning;               // reasoning_content / reasoning field, if the server splits thoughts
  std::string finish_reason;           // "stop", "length", ...
  std::vector<TokenLogprob> logprobs;  // when requested and returned
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  int attempts = 0;                    // 1 + retries used
  double latency_s = 0;                // wall time including retries
};

class ChatClient {
 public:
  // Fails on a base URL it cannot use (no scheme, https without TLS support in this build).
  static common::Expected<std::unique_ptr<ChatClient>> create(ChatClientConfig config);

  // Sends one chat completion. An Error names the URL and what went wrong after the retries.
  common::Expected<ChatResponse> complete(const std::vector<ChatMessage>& messages);

  const ChatClientConfig& config() const { return config_; }

 private:
  explicit ChatClient(ChatClientConfig config) : config_(std::move(config)) {}

  ChatClientConfig config_;
  std::string scheme_host_port_;  // for httplib::Client
  std::string path_;              // .../chat/completions
  std::string api_key_;
  std::mutex mutex_;
  std::condition_variable slot_free_;
  int in_flight_ = 0;
};

// The request body for `messages` (exposed for tests and logging).
nlohmann::json chat_request_body(const ChatClientConfig& config, const std::vector<ChatMessage>& messages);

// Reads a chat-completions response body; an Error says what is missing.
common::Expected<ChatResponse> parse_chat_response(const std::string& body);

}  // namespace kernelrl::policy
