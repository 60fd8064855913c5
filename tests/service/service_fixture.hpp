// What the service tests share: the processes of service_processes.hpp, a scratch folder per test
// and an HTTP client with the test's token.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "service_processes.hpp"

namespace kernelrl::service::testing {

// A scratch folder per test, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("kernelrl-service-test-" + std::to_string(::getpid()) + "-" + (info ? info->name() : "suite"));
    (void)common::remove_tree(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { (void)common::remove_tree(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// An HTTP client of a front on loopback.
class Http {
 public:
  Http(int port, std::string token) : client_("127.0.0.1", port), token_(std::move(token)) {
    client_.set_read_timeout(std::chrono::seconds(120));
    client_.set_write_timeout(std::chrono::seconds(60));
  }
  struct Reply {
    int status = 0;
    nlohmann::json body;
    std::string text;
    std::string retry_after;
  };
  Reply get(const std::string& path, const std::string& token = "\x01") { return finish(client_.Get(path, headers(token))); }
  Reply post(const std::string& path, const std::string& body, const std::string& token = "\x01") {
    return finish(client_.Post(path, headers(token), body, "application/json"));
  }
  Reply post(const std::string& path, const nlohmann::json& body) { return post(path, body.dump()); }

 private:
  httplib::Headers headers(const std::string& token) const {
    const std::string t = token == "\x01" ? token_ : token;  // "\x01": the test's own token
    return t.empty() ? httplib::Headers{} : httplib::Headers{{"Authorization", "Bearer " + t}};
  }
  static Reply finish(const httplib::Result& res) {
    Reply r;
    if (!res) return r;  // status 0: no answer
    r.status = res->status;
    r.text = res->body;
    r.body = nlohmann::json::parse(res->body, nullptr, false);
    r.retry_after = res->get_header_value("Retry-After");
    return r;
  }
  httplib::Client client_;
  std::string token_;
};

inline constexpr const char* kTestToken = "service-test-token-0123456789abcdef";

inline fs::path write_token_file(const fs::path& dir) {
  const fs::path f = dir / "tokens";
  std::ofstream(f) << "# test tokens\n" << kTestToken << "\n";
  return f;
}

}  // namespace kernelrl::service::testing
