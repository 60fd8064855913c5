// A scripted OpenAI-compatible server on loopback for tests: answers POST .../chat/completions
// from a queue of canned replies (status, body, delay, headers), records the requests it saw and
// the most requests it had in flight at once.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelrl::policy::testing {

struct CannedReply {
  int status = 200;
  std::string body;
  std::chrono::milliseconds delay{0};
  std::string retry_after;  // Retry-After header, if set
};

// A chat-completions body with `content` (and optional reasoning field).
inline std::string completion_body(const std::string& content, const std::string& reasoning = "") {
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!reasoning.empty()) message["reasoning_content"] = reasoning;
  return nlohmann::json{{"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 11}, {"completion_tokens", 7}}}}
      .dump();
}

class ScriptedServer {
 public:
  ScriptedServer() {
    server_.Post(R"(/v1/chat/completions)", [this](const httplib::Request& req, httplib::Response& res) {
      int now = ++in_flight_;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        max_in_flight_ = std::max(max_in_flight_, now);
        requests_.push_back(req.body);
        authorization_ = req.get_header_value("Authorization");
      }
      CannedReply reply{200, completion_body("```cuda\nint x;\n```\ndefault"), std::chrono::milliseconds(0), ""};
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!replies_.empty()) {
          reply = replies_.front();
          replies_.pop_front();
        }
      }
      std::this_thread::sleep_for(reply.delay);
      res.status = reply.status;
      if (!reply.retry_after.empty()) res.set_header("Retry-After", reply.retry_after);
      res.set_content(reply.body, "application/json");
      --in_flight_;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }

  void script(std::vector<CannedReply> replies) {
    std::lock_guard<std::mutex> lock(mutex_);
    replies_.assign(replies.begin(), replies.end());
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  int max_in_flight() {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_in_flight_;
  }
  std::string authorization() {
    std::lock_guard<std::mutex> lock(mutex_);
    return authorization_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::deque<CannedReply> replies_;
  std::vector<std::string> requests_;
  std::atomic<int> in_flight_{0};
  int max_in_flight_ = 0;
  std::string authorization_;
};

}  // namespace kernelrl::policy::testing
