// The service's small parts: Redis URLs, bearer tokens (file format, constant-time comparison),
// which GPUs `--gpus` means, and the Prometheus text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "service/auth.hpp"
#include "service/metrics.hpp"
#include "service/redis.hpp"
#include "service/slots.hpp"

namespace kernelrl::service {
namespace {

namespace fs = std::filesystem;

TEST(RedisUrl, ParsesHostPortDatabaseAndPassword) {
  auto u = RedisUrl::parse("redis://:s3cret@cache.internal:6380/2");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->host, "cache.internal");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 2);
  EXPECT_EQ(u->password, "s3cret");
  EXPECT_EQ(u->text.find("s3cret"), std::string::npos) << u->text;  // never printed
  auto plain = RedisUrl::parse("redis://10.0.0.5");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->port, 6379);
  for (const char* bad : {"http://x:1", "redis://", "redis://h:99999", "redis://h:1/x"}) {
    auto r = RedisUrl::parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("--redis"), std::string::npos) << r.error().message;
  }
}

fs::path write(const std::string& name, const std::string& text) {
  fs::path p = fs::temp_directory_path() / ("kernelrl-parts-test-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p;
}

// A Redis off this host needs a password (from a file, never the command line) unless told; a
// loopback one does not; file errors name the file.
TEST(RedisAccess, ARemoteRedisWithoutAPasswordIsRefusedUnlessTold) {
  auto remote = resolve_redis({"redis://10.0.0.5:6379", "", false});
  ASSERT_FALSE(remote);
  EXPECT_NE(remote.error().message.find("redis://10.0.0.5:6379 is reached without a password"), std::string::npos)
      << remote.error().message;
  EXPECT_NE(remote.error().message.find("--redis-password-file"), std::string::npos);
  EXPECT_TRUE(resolve_redis({"redis://10.0.0.5:6379", "", true}));
  for (const char* local : {"redis://127.0.0.1:6379", "redis://localhost", "redis://127.0.0.2:7000"}) {
    EXPECT_TRUE(resolve_redis({local, "", false})) << local;
  }
  auto with_file = resolve_redis({"redis://cache.internal:6380/2", write("redis-password", "s3cret \nignored\n").string(), false});
  ASSERT_TRUE(with_file) << with_file.error().message;
  EXPECT_EQ(with_file->password, "s3cret");
  EXPECT_EQ(with_file->text, "redis://:***@cache.internal:6380/2");
  auto in_url = resolve_redis({"redis://:inline@cache.internal", "", false});
  ASSERT_TRUE(in_url);
  EXPECT_EQ(in_url->password, "inline");
  auto missing = resolve_redis({"redis://cache.internal", "/nonexistent/redis-password", false});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("--redis-password-file: "), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("/nonexistent/redis-password"), std::string::npos) << missing.error().message;
  auto empty = resolve_redis({"redis://cache.internal", write("empty-password", "\n").string(), false});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("its first line is empty"), std::string::npos) << empty.error().message;
}

TEST(TokenAuth, AcceptsOnlyTheFilesTokensAsBearer) {
  auto auth = TokenAuth::from_file(write("tokens", "# comment\n\n  first-token-0123456789  \nsecond-token-abcdefghij\n"));
  ASSERT_TRUE(auth) << auth.error().message;
  EXPECT_TRUE(auth->enabled());
  EXPECT_TRUE(auth->allows("Bearer first-token-0123456789"));
  EXPECT_TRUE(auth->allows("Bearer second-token-abcdefghij"));
  EXPECT_FALSE(auth->allows("Bearer first-token-012345678"));   // a prefix
  EXPECT_FALSE(auth->allows("Bearer first-token-01234567890"));  // longer
  EXPECT_FALSE(auth->allows("first-token-0123456789"));          // no scheme
  EXPECT_FALSE(auth->allows("Basic first-token-0123456789"));
  EXPECT_FALSE(auth->allows(""));
  EXPECT_TRUE(TokenAuth::open().allows(""));
}

// Idempotency keys are kept per token, under a digest of it (the token itself is never stored).
TEST(TokenAuth, EachTokenHasAScopeOfItsOwn) {
  auto auth = TokenAuth::from_file(write("scoped-tokens", "first-token-0123456789\nsecond-token-abcdefghij\n"));
  ASSERT_TRUE(auth) << auth.error().message;
  const std::string first = auth->scope("Bearer first-token-0123456789");
  const std::string second = auth->scope("Bearer second-token-abcdefghij");
  EXPECT_EQ(first.size(), 18u) << first;
  EXPECT_EQ(first.rfind("t-", 0), 0u) << first;
  EXPECT_NE(first, second);
  EXPECT_EQ(first, auth->scope("Bearer first-token-0123456789"));
  EXPECT_EQ(first.find("first-token"), std::string::npos);
  EXPECT_EQ(auth->scope("Bearer not-a-token-0123456789"), "");
  EXPECT_EQ(TokenAuth::open().scope(""), "open");
}

TEST(TokenAuth, ATokenMayBeMarkedToSendTasksAsText) {
  auto auth = TokenAuth::from_file(write("marked-tokens", "plain-token-0123456789\ntrainer-token-0123456789  task_source\n"));
  ASSERT_TRUE(auth) << auth.error().message;
  EXPECT_TRUE(auth->allows("Bearer trainer-token-0123456789"));
  EXPECT_TRUE(auth->may_send_tasks("Bearer trainer-token-0123456789"));
  EXPECT_FALSE(auth->may_send_tasks("Bearer plain-token-0123456789"));
  EXPECT_FALSE(auth->may_send_tasks("Bearer trainer-token-0123456789 task_source"));
  auto unknown = TokenAuth::from_file(write("bad-permission", "plain-token-0123456789 admin\n"));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find(":1: 'admin' is not a permission"), std::string::npos) << unknown.error().message;
}

TEST(TokenAuth, FileErrorsNameTheFileAndLine) {
  auto short_token = TokenAuth::from_file(write("short", "ok-token-0123456789\nshort\n"));
  ASSERT_FALSE(short_token);
  EXPECT_NE(short_token.error().message.find(":2: a token of 5 characters"), std::string::npos) << short_token.error().message;
  auto empty = TokenAuth::from_file(write("empty", "# nothing\n"));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("holds no token"), std::string::npos);
  auto missing = TokenAuth::from_file("/no/such/tokens");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/no/such/tokens"), std::string::npos);
}

TEST(TokenAuth, ConstantTimeEqualComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(Metrics, HistogramsAreCumulativeAndCountersNamed) {
  QueueStats s;
  s.depth = 7;
  s.in_flight = 3;
  s.workers_alive = 2;
  s.counters = {{"submitted", 10}, {"evaluations", 9}, {"status:OK", 6}, {"status:TIMEOUT", 2}, {"poisoned", 1}};
  s.evaluation_hist = {{"le:0.05", "2"}, {"le:1", "3"}, {"le:+Inf", "1"}, {"sum", "12.5"}, {"count", "6"}};
  HttpCounters http;
  http.count(202);
  http.count(429);
  const std::string text = render_metrics(s, http);
  for (const char* line : {"kernelrl_queue_depth 7\n", "kernelrl_jobs_in_flight 3\n", "kernelrl_jobs_queued 4\n",
                           "kernelrl_workers_alive 2\n", "kernelrl_jobs_submitted_total 10\n",
                           "kernelrl_jobs_finished_total{status=\"OK\"} 6\n",
                           "kernelrl_jobs_finished_total{status=\"TIMEOUT\"} 2\n", "kernelrl_jobs_poisoned_total 1\n",
                           "kernelrl_http_responses_total{class=\"2xx\"} 1\n",
                           "kernelrl_http_responses_total{class=\"4xx\"} 1\n",
                           "kernelrl_evaluation_seconds_bucket{le=\"0.025\"} 0\n",
                           "kernelrl_evaluation_seconds_bucket{le=\"0.05\"} 2\n",
                           "kernelrl_evaluation_seconds_bucket{le=\"0.5\"} 2\n",
                           "kernelrl_evaluation_seconds_bucket{le=\"1\"} 5\n",
                           "kernelrl_evaluation_seconds_bucket{le=\"+Inf\"} 6\n", "kernelrl_evaluation_seconds_sum 12.5\n",
                           "kernelrl_evaluation_seconds_count 6\n", "# TYPE kernelrl_job_latency_seconds histogram\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
}

}  // namespace
}  // namespace kernelrl::service
