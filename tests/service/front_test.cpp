// The HTTP front against a real redis-server, with workers played by the test: bearer tokens,
// 4xx errors naming the field (malformed, unknown field, oversized, unknown job), 429 with
// Retry-After when the queue is over its bound, 503 while Redis is away, a waiting GET woken by the
// stored result, batch results in submission order, tasks, workers and metrics.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <random>

#include "service/front.hpp"
#include "service_fixture.hpp"

namespace kernelrl::service::testing {
namespace {

nlohmann::json host_job(const std::string& client_id = "") {
  nlohmann::json j = {{"task", "service/task_add.py"}, {"candidate", "int x;"}, {"format", "host"}};
  if (!client_id.empty()) j["client_id"] = client_id;
  return j;
}

class FrontTest : public ::testing::Test {
 protected:
  ScratchDir scratch;
  RedisServer redis{scratch.path() / "redis"};
  JobQueue queue{"front-test"};
  std::unique_ptr<RedisConnection> c = redis.connect();
  std::unique_ptr<Front> front;

  void start(ServeConfig config = {}) {
    ASSERT_TRUE(redis.up()) << redis.log();
    config.redis.url = redis.url();
    config.listen = "127.0.0.1:0";
    if (config.token_file.empty()) config.token_file = write_token_file(scratch.path());
    config.task_sets = {"service=" + source_path("tests/service/data")};
    config.prefix = "front-test";
    auto f = Front::create(config);
    ASSERT_TRUE(f) << f.error().message;
    front = std::move(*f);
    ASSERT_TRUE(front->start());
  }
  Http http() { return Http(front->port(), kTestToken); }
  // A worker's part: take the next job and store `status` for it.
  std::string finish_next(const std::string& status) {
    auto d = queue.read_next(*c, "test-worker", 1000);
    EXPECT_TRUE(d && *d);
    if (!d || !*d) return "";
    EXPECT_TRUE(queue.start(*c, (*d)->job_id, "test-worker"));
    JobQueue::Stored s{&**d, nlohmann::json{{"status", status}}.dump(), status, 0.01, false, "test-worker", 3600};
    EXPECT_TRUE(queue.store_result(*c, s));
    return (*d)->job_id;
  }
};

TEST_F(FrontTest, EveryRouteButHealthNeedsTheToken) {
  start();
  auto h = http();
  for (const std::string& token : {std::string(""), std::string("wrong-token-0123456789abcdef0123"),
                                   std::string(kTestToken) + "x", std::string(kTestToken).substr(1)}) {
    auto r = h.post("/v1/evaluations", host_job().dump(), token);
    EXPECT_EQ(r.status, 401) << "token '" << token << "': " << r.text;
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find("bearer token"), std::string::npos);
    EXPECT_EQ(h.get("/v1/tasks", token).status, 401);
    EXPECT_EQ(h.get("/metrics", token).status, 401);
  }
  EXPECT_EQ(*queue.depth(*c), 0);
  auto health = h.get("/healthz", "");
  EXPECT_EQ(health.status, 200) << health.text;
  EXPECT_EQ(health.body["status"], "ok");
  EXPECT_EQ(h.post("/v1/evaluations", host_job()).status, 202);
}

TEST_F(FrontTest, MalformedRequestsAre400NamingTheFieldAndEnqueueNothing) {
  start();
  auto h = http();
  auto not_json = h.post("/v1/evaluations", std::string("{\"jobs\": [ oops"));
  EXPECT_EQ(not_json.status, 400);
  EXPECT_NE(not_json.text.find("the request body is not JSON"), std::string::npos) << not_json.text;
  auto not_list = h.post("/v1/evaluations", nlohmann::json{{"jobs", "all of them"}});
  EXPECT_EQ(not_list.status, 400);
  EXPECT_NE(not_list.text.find("jobs: must be a non-empty list"), std::string::npos) << not_list.text;
  auto extra = h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job()}}, {"priority", 1}});
  EXPECT_EQ(extra.status, 400);
  EXPECT_NE(extra.text.find("priority: unknown field"), std::string::npos) << extra.text;
  auto bad_second = host_job();
  bad_second["options"] = {{"n_trials", -1}};
  auto partly_bad = h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job(), bad_second}}});
  EXPECT_EQ(partly_bad.status, 400);
  EXPECT_NE(partly_bad.text.find("jobs[1].options.n_trials: -1 is outside [1, 100]"), std::string::npos) << partly_bad.text;
  auto unknown_task = host_job();
  unknown_task["task"] = "service/nope.py";
  auto r = h.post("/v1/evaluations", unknown_task);
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.text.find("job.task: 'service/nope.py': no such task file"), std::string::npos) << r.text;
  EXPECT_EQ(*queue.depth(*c), 0);  // a batch with one bad job enqueues none of it
  auto bad_wait = h.get("/v1/evaluations/j-0123?wait_s=forever");
  EXPECT_EQ(bad_wait.status, 400);
  EXPECT_NE(bad_wait.text.find("wait_s: 'forever'"), std::string::npos) << bad_wait.text;
  auto unknown = h.get("/v1/evaluations/j-0123456789");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.text.find("job 'j-0123456789' is unknown"), std::string::npos) << unknown.text;
  auto no_route = h.get("/v2/things");
  EXPECT_EQ(no_route.status, 404);
  EXPECT_NE(no_route.text.find("no route GET /v2/things"), std::string::npos) << no_route.text;
}

TEST_F(FrontTest, OversizedRequestsAre413) {
  ServeConfig config;
  config.max_request_bytes = 64 << 10;
  config.max_batch_jobs = 5;
  start(config);
  auto h = http();
  auto big = host_job();
  big["candidate"] = std::string(100 << 10, 'x');
  auto r = h.post("/v1/evaluations", big);
  EXPECT_EQ(r.status, 413) << r.text;
  EXPECT_NE(r.text.find("over the 65536-byte limit (serve --max-request-mb)"), std::string::npos) << r.text;
  auto many = h.post("/v1/evaluations", nlohmann::json{{"jobs", std::vector<nlohmann::json>(6, host_job())}});
  EXPECT_EQ(many.status, 413);
  EXPECT_NE(many.text.find("jobs: 6 jobs, over the limit of 5 per request (serve --max-batch)"), std::string::npos)
      << many.text;
  EXPECT_EQ(*queue.depth(*c), 0);
}

// Bodies no client sends: nested past any job's depth (300,000 '[' once crashed the server), bytes
// that are not UTF-8 (once a 500), numbers at the edges, and a seeded fuzz of mutated jobs. Every one
// gets a 4xx with a JSON error (or 202 where the mutation left a valid job), and the server lives.
TEST_F(FrontTest, HostileBodiesGetA4xxAndTheServerLives) {
  start();
  auto h = http();
  const auto expect_4xx = [&](const std::string& body, const std::string& what, const std::string& says) {
    auto r = h.post("/v1/evaluations", body);
    EXPECT_GE(r.status, 400) << what << ": " << r.text.substr(0, 300);
    EXPECT_LT(r.status, 500) << what << ": " << r.text.substr(0, 300);
    EXPECT_TRUE(r.body.is_object() && r.body.contains("error")) << what << ": " << r.text.substr(0, 300);
    EXPECT_NE(r.text.find(says), std::string::npos) << what << ": " << r.text.substr(0, 300);
  };
  expect_4xx(std::string(300000, '['), "300,000 nested [", "nests deeper than 32 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  expect_4xx(objects, "100,000 nested objects", "nests deeper than 32 levels");
  auto deep_option = host_job();
  nlohmann::json inner = 1;
  for (int i = 0; i < 40; ++i) inner = nlohmann::json::array({inner});
  deep_option["options"] = {{"n_trials", inner}};
  expect_4xx(deep_option.dump(), "an option 40 levels deep", "nests deeper than 32 levels");
  const std::string job = host_job().dump();
  expect_4xx(job.substr(0, job.size() - 1) + ",\"candidate_name\":\"a\xff\xfe.cpp\"}", "not UTF-8 in a string",
             "the request body is not JSON");
  expect_4xx("{\"\xc3\x28\":1}", "not UTF-8 in a key", "the request body is not JSON");
  expect_4xx("\xef\xbb\xbf\xff" + job, "a stray byte before the body", "the request body is not JSON");
  for (const std::string& n : {"1e400", "-1e400", "18446744073709551616", "-9223372036854775809", "NaN", "1e-400"}) {
    auto with = job.substr(0, job.size() - 1) + ",\"options\":{\"n_trials\":" + n + "}}";
    auto r = h.post("/v1/evaluations", with);
    EXPECT_EQ(r.status, 400) << n << ": " << r.text;
  }
  // A seeded fuzz: bytes flipped, inserted, deleted and spans repeated in a valid batch.
  const std::string batch = nlohmann::json{{"jobs", {host_job(), host_job("fuzz-a")}}}.dump();
  std::mt19937 rng(20261207);
  int accepted = 0;
  for (int i = 0; i < 400; ++i) {
    std::string body = batch;
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const std::size_t at = rng() % body.size();
      switch (rng() % 4) {
        case 0: body[at] = static_cast<char>(rng() % 256); break;
        case 1: body.insert(at, 1, static_cast<char>(rng() % 256)); break;
        case 2: body.erase(at, 1 + rng() % 8); break;
        default: body.insert(at, body.substr(at, std::min<std::size_t>(body.size() - at, 1 + rng() % 64))); break;
      }
    }
    auto r = h.post("/v1/evaluations", body);
    ASSERT_NE(r.status, 0) << "no answer to fuzz body " << i << ": the server died";
    EXPECT_TRUE(r.status == 202 || (r.status >= 400 && r.status < 500)) << "fuzz body " << i << ": " << r.status << " " << r.text;
    EXPECT_TRUE(r.body.is_object()) << "fuzz body " << i << ": " << r.text;
    accepted += r.status == 202;
  }
  std::cout << "[ fuzz     ] 400 mutated batches: " << accepted << " accepted as valid jobs, the rest 4xx\n";
  EXPECT_EQ(h.get("/healthz", "").status, 200);
  EXPECT_EQ(h.post("/v1/evaluations", host_job()).status, 202);
  auto metrics = h.get("/metrics");
  EXPECT_NE(metrics.text.find("kernelrl_http_responses_total{class=\"5xx\"} 0"), std::string::npos) << metrics.text;
}

// A Redis with a password: the front reaches it with the password from a file, and without it
// cannot start (the error says so).
TEST(FrontAuth, ARedisWithAPasswordIsReachedThroughThePasswordFile) {
  ScratchDir scratch;
  RedisServer redis(scratch.path() / "redis", "front-test-redis-password");
  ASSERT_TRUE(redis.up()) << redis.log();
  ServeConfig config;
  config.redis.url = redis.url();
  config.listen = "127.0.0.1:0";
  config.prefix = "front-auth";
  config.task_sets = {"service=" + source_path("tests/service/data")};
  auto without = Front::create(config);
  ASSERT_FALSE(without);
  EXPECT_NE(without.error().message.find(redis.url()), std::string::npos) << without.error().message;
  const fs::path file = scratch.path() / "redis-password";
  std::ofstream(file) << "front-test-redis-password\n";
  config.redis.password_file = file.string();
  auto front = Front::create(config);
  ASSERT_TRUE(front) << front.error().message;
  ASSERT_TRUE((*front)->start());
  Http h((*front)->port(), "");
  EXPECT_EQ(h.post("/v1/evaluations", host_job()).status, 202);
  EXPECT_EQ(h.get("/healthz", "").status, 200);
  auto c = RedisConnection::connect(redis.redis_url(), 5);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(*JobQueue("front-auth").depth(**c), 1);
}

// An idempotency key resent with other content is a conflict (409), not the first job's result.
TEST_F(FrontTest, AClientIdResentWithOtherContentIs409) {
  start();
  auto h = http();
  auto first = h.post("/v1/evaluations", host_job("run-1/turn-1"));
  ASSERT_EQ(first.status, 202) << first.text;
  auto again = h.post("/v1/evaluations", host_job("run-1/turn-1"));
  EXPECT_EQ(again.status, 202) << again.text;
  EXPECT_EQ(again.body["id"], first.body["id"]);
  EXPECT_EQ(again.body["existing"], true);
  auto other = host_job("run-1/turn-1");
  other["candidate"] = "int y;";
  auto conflict = h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job("run-1/turn-2"), other}}});
  EXPECT_EQ(conflict.status, 409) << conflict.text;
  EXPECT_NE(conflict.text.find("jobs[1].client_id: 'run-1/turn-1' names a job of other content"), std::string::npos)
      << conflict.text;
  EXPECT_EQ(*queue.depth(*c), 1);
}

// Tasks as text only from a token marked for it (or from all with --allow-task-source).
TEST_F(FrontTest, OnlyATokenMarkedTaskSourceSendsTasksAsText) {
  const fs::path tokens = scratch.path() / "scoped-tokens";
  const std::string trainer = "trainer-token-0123456789abcdef";
  std::ofstream(tokens) << kTestToken << "\n" << trainer << " task_source\n";
  ServeConfig config;
  config.token_file = tokens.string();
  start(config);
  auto h = http();
  nlohmann::json by_text = {{"task_source", read_text(source_path("tests/service/data/task_add.py"))},
                            {"candidate", "int x;"}, {"format", "host"}};
  auto refused = h.post("/v1/evaluations", by_text.dump());
  EXPECT_EQ(refused.status, 403) << refused.text;
  EXPECT_NE(refused.text.find("job.task_source: this service takes tasks from this token by task-set path only"),
            std::string::npos) << refused.text;
  auto taken = h.post("/v1/evaluations", by_text.dump(), trainer);
  EXPECT_EQ(taken.status, 202) << taken.text;
  EXPECT_EQ(*queue.depth(*c), 1);
}

// A wait longer than --max-wait-s is capped, not refused (the docs say so).
TEST_F(FrontTest, ALongerWaitIsCapped) {
  ServeConfig config;
  config.max_wait_s = 0.5;
  start(config);
  auto h = http();
  auto submitted = h.post("/v1/evaluations", host_job());
  ASSERT_EQ(submitted.status, 202) << submitted.text;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = h.get("/v1/evaluations/" + submitted.body["id"].get<std::string>() + "?wait_s=600");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["state"], "queued");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(FrontTest, AFullQueueIs429WithRetryAfter) {
  ServeConfig config;
  config.max_queue = 3;
  config.retry_after_s = 7;
  start(config);
  auto h = http();
  EXPECT_EQ(h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job(), host_job(), host_job()}}}).status, 202);
  auto full = h.post("/v1/evaluations", host_job());
  EXPECT_EQ(full.status, 429) << full.text;
  EXPECT_EQ(full.retry_after, "7");
  EXPECT_NE(full.text.find("the queue holds 3 jobs and its bound is 3 (serve --max-queue)"), std::string::npos) << full.text;
  // A batch larger than the queue ever holds would get 429 forever: 413.
  auto never = h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job(), host_job(), host_job(), host_job()}}});
  EXPECT_EQ(never.status, 413) << never.text;
  EXPECT_NE(never.text.find("4 jobs, more than the queue ever holds (3, serve --max-queue)"), std::string::npos) << never.text;
  finish_next("OK");  // a finished job makes room
  EXPECT_EQ(h.post("/v1/evaluations", host_job()).status, 202);
  auto metrics = h.get("/metrics");
  EXPECT_NE(metrics.text.find("kernelrl_http_responses_total{class=\"4xx\"} 2"), std::string::npos) << metrics.text;
}

TEST_F(FrontTest, AWaitingGetIsWokenByTheResultAndBatchesComeBackInOrder) {
  start();
  auto h = http();
  auto submitted = h.post("/v1/evaluations", host_job("mine-1"));
  ASSERT_EQ(submitted.status, 202) << submitted.text;
  const std::string id = submitted.body["id"];
  auto queued = h.get("/v1/evaluations/" + id);
  EXPECT_EQ(queued.body["state"], "queued");
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    finish_next("WRONG_OUTPUT");
  });
  const auto t0 = clock_type::now();
  auto done = h.get("/v1/evaluations/" + id + "?wait_s=20");
  const double waited_s = seconds_since(t0);
  worker.join();
  EXPECT_EQ(done.body["state"], "done") << done.text;
  EXPECT_EQ(done.body["result"]["status"], "WRONG_OUTPUT");
  EXPECT_EQ(done.body["attempts"], 1);
  EXPECT_LT(waited_s, 5) << "the stored result should end the wait at once";
  auto same = h.post("/v1/evaluations", host_job("mine-1"));  // idempotent by client id
  EXPECT_EQ(same.body["id"], id);
  EXPECT_EQ(same.body["existing"], true);

  auto batch = h.post("/v1/evaluations", nlohmann::json{{"jobs", {host_job(), host_job(), host_job("mine-1")}}});
  ASSERT_EQ(batch.status, 202) << batch.text;
  EXPECT_EQ(batch.body["n_existing"], 1);
  const auto ids = batch.body["ids"].get<std::vector<std::string>>();
  EXPECT_EQ(ids[2], id);
  auto pending = h.get("/v1/batches/" + batch.body["batch"].get<std::string>() + "?wait_s=0.2");
  EXPECT_EQ(pending.body["done"], false);
  EXPECT_EQ(pending.body["n_done"], 1);
  std::thread workers([&] {
    finish_next("OK");
    finish_next("TIMEOUT");
  });
  auto all = h.get("/v1/batches/" + batch.body["batch"].get<std::string>() + "?wait_s=20");
  workers.join();
  ASSERT_EQ(all.body["done"], true) << all.text;
  ASSERT_EQ(all.body["jobs"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(all.body["jobs"][i]["id"], ids[i]);
  EXPECT_EQ(all.body["jobs"][0]["result"]["status"], "OK");
  EXPECT_EQ(all.body["jobs"][1]["result"]["status"], "TIMEOUT");
  EXPECT_EQ(all.body["jobs"][2]["result"]["status"], "WRONG_OUTPUT");
}

TEST_F(FrontTest, TasksWorkersAndMetrics) {
  start();
  auto h = http();
  auto tasks = h.get("/v1/tasks");
  ASSERT_EQ(tasks.status, 200);
  EXPECT_EQ(tasks.body["task_sets"][0]["name"], "service");
  EXPECT_EQ(tasks.body["task_sets"][0]["tasks"][0]["task"], "service/task_add.py");
  ASSERT_TRUE(queue.heartbeat(*c, "h/1/cpu", {{"device", "cpu"}}));
  auto workers = h.get("/v1/workers");
  ASSERT_EQ(workers.body["workers"].size(), 1u);
  EXPECT_EQ(h.get("/healthz").body["devices"], nlohmann::json::array({"cpu"}));
  h.post("/v1/evaluations", host_job());
  h.post("/v1/evaluations", host_job());
  finish_next("OK");
  auto metrics = h.get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  for (const char* line : {"kernelrl_queue_depth 1\n", "kernelrl_workers_alive 1\n", "kernelrl_jobs_submitted_total 2\n",
                           "kernelrl_jobs_finished_total{status=\"OK\"} 1\n", "kernelrl_evaluation_seconds_count 1\n",
                           "kernelrl_job_latency_seconds_count 1\n"}) {
    EXPECT_NE(metrics.text.find(line), std::string::npos) << "missing " << line << metrics.text;
  }
}

TEST_F(FrontTest, WhileRedisIsAwayRequestsAre503AndThenWorkAgain) {
  start();
  auto h = http();
  ASSERT_EQ(h.post("/v1/evaluations", host_job("kept")).status, 202);
  redis.kill();
  auto down = h.post("/v1/evaluations", host_job());
  EXPECT_EQ(down.status, 503) << down.text;
  EXPECT_EQ(down.retry_after, "1");
  EXPECT_NE(down.text.find("the queue (Redis) cannot be reached"), std::string::npos) << down.text;
  EXPECT_EQ(h.get("/healthz", "").status, 503);
  redis.start();
  ASSERT_TRUE(redis.up()) << redis.log();
  c = redis.connect();
  EXPECT_TRUE(eventually(10, [&] { return h.get("/healthz", "").status == 200; }));
  auto again = h.post("/v1/evaluations", host_job("kept"));  // the job from before the restart is still known
  EXPECT_EQ(again.status, 202) << again.text;
  EXPECT_EQ(again.body["existing"], true);
  EXPECT_EQ(*queue.depth(*c), 1);
}

}  // namespace
}  // namespace kernelrl::service::testing
