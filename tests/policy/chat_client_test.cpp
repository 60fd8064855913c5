// The chat client against a scripted server on loopback: request shape, reasoning field, token
// counts, retries on 429/500 with Retry-After, no retry on 400, server down, malformed replies,
// timeouts and the in-flight limit.
#include "policy/chat_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <vector>

#include "scripted_server.hpp"

namespace kernelrl::policy {
namespace {

using testing::CannedReply;
using testing::completion_body;
using testing::ScriptedServer;

ChatClientConfig fast_config(const std::string& url) {
  ChatClientConfig c;
  c.base_url = url;
  c.model = "test-model";
  c.timeout_s = 2;
  c.max_retries = 2;
  c.backoff_initial_s = 0.01;
  c.backoff_max_s = 0.05;
  return c;
}

const std::vector<ChatMessage> kHello{{"system", "be brief"}, {"user", "write a kernel"}};

TEST(ChatClient, SendsTheRecipeAndReadsTheAnswer) {
  ScriptedServer server;
  server.script({{200, completion_body("```cuda\nk();\n```\nfused", "I should fuse"), {}, ""}});
  ::setenv("KERNELRL_TEST_KEY", "secret-123", 1);
  auto config = fast_config(server.base_url());
  config.api_key_env = "KERNELRL_TEST_KEY";
  auto client = ChatClient::create(config);
  ASSERT_TRUE(client) << client.error().message;
  auto r = (*client)->complete(kHello);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "```cuda\nk();\n```\nfused");
  EXPECT_EQ(r->reasoning, "I should fuse");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->prompt_tokens, 11);
  EXPECT_EQ(r->completion_tokens, 7);
  EXPECT_EQ(r->attempts, 1);
  auto sent = nlohmann::json::parse(server.requests().at(0));
  EXPECT_EQ(sent["model"], "test-model");
  EXPECT_DOUBLE_EQ(sent["temperature"].get<double>(), 0.9);
  EXPECT_EQ(sent["messages"].size(), 2u);
  EXPECT_EQ(sent["messages"][1]["content"], "write a kernel");
  EXPECT_EQ(server.authorization(), "Bearer secret-123");
  ::unsetenv("KERNELRL_TEST_KEY");
}

TEST(ChatClient, RetriesRateLimitsAndServerErrors) {
  ScriptedServer server;
  server.script({{429, R"({"error":"slow down"})", {}, "0"}, {500, "oops", {}, ""}, {200, completion_body("ok"), {}, ""}});
  auto client = ChatClient::create(fast_config(server.base_url()));
  auto r = (*client)->complete(kHello);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->content, "ok");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(ChatClient, GivesUpNamingTheUrlAndTheLastError) {
  ScriptedServer server;
  server.script({{503, "down", {}, ""}, {503, "down", {}, ""}, {503, "still down", {}, ""}});
  auto client = ChatClient::create(fast_config(server.base_url()));
  auto r = (*client)->complete(kHello);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(server.base_url() + "/chat/completions"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("503"), std::string::npos);
  EXPECT_NE(r.error().message.find("still down"), std::string::npos);
}

TEST(ChatClient, ClientErrorsAreNotRetried) {
  ScriptedServer server;
  server.script({{400, R"({"error":"bad model"})", {}, ""}});
  auto client = ChatClient::create(fast_config(server.base_url()));
  auto r = (*client)->complete(kHello);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("HTTP 400"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ChatClient, MalformedAndEmptyRepliesAreErrors) {
  ScriptedServer server;
  server.script({{200, "not json", {}, ""}});
  auto client = ChatClient::create(fast_config(server.base_url()));
  auto bad = (*client)->complete(kHello);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not JSON"), std::string::npos);
  server.script({{200, R"({"choices":[]})", {}, ""}});
  auto empty = (*client)->complete(kHello);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no choices"), std::string::npos);
}

TEST(ChatClient, ServerDownAndTimeoutsEndInAnError) {
  auto down = ChatClient::create(fast_config("http://127.0.0.1:9/v1"));  // discard port: nothing listens
  auto r = (*down)->complete(kHello);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("127.0.0.1:9"), std::string::npos) << r.error().message;

  ScriptedServer slow;
  auto config = fast_config(slow.base_url());
  config.timeout_s = 0.2;
  config.max_retries = 1;
  slow.script({{200, completion_body("late"), std::chrono::milliseconds(800), ""},
               {200, completion_body("on time"), std::chrono::milliseconds(0), ""}});
  auto client = ChatClient::create(config);
  auto late = (*client)->complete(kHello);
  ASSERT_TRUE(late) << late.error().message;
  EXPECT_EQ(late->content, "on time");
  EXPECT_EQ(late->attempts, 2);
}

TEST(ChatClient, RespectsTheInFlightLimit) {
  ScriptedServer server;
  std::vector<CannedReply> replies(12, CannedReply{200, completion_body("x"), std::chrono::milliseconds(50), ""});
  server.script(replies);
  auto config = fast_config(server.base_url());
  config.max_in_flight = 3;
  auto client = ChatClient::create(config);
  std::vector<std::future<common::Expected<ChatResponse>>> futures;
  for (int i = 0; i < 12; ++i) futures.push_back(std::async(std::launch::async, [&] { return (*client)->complete(kHello); }));
  for (auto& f : futures) EXPECT_TRUE(f.get());
  EXPECT_LE(server.max_in_flight(), 3);
  EXPECT_GE(server.max_in_flight(), 2);
}

TEST(ChatClient, BadBaseUrlsAreRejected) {
  auto r = ChatClient::create(fast_config("localhost:8000"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("localhost:8000"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::policy
