// The queue's guarantees against a real redis-server (started by the test on a free port), with
// workers played by the test: a client id enqueues once; a result is stored once and acknowledged
// in the same step, a redelivered duplicate changes nothing; a job whose holder went silent is
// claimed with its delivery count, one whose holder heartbeats is not; batches count each job once.
#include <gtest/gtest.h>

#include <chrono>

#include "service/queue.hpp"
#include "service_fixture.hpp"

namespace kernelrl::service::testing {
namespace {

JobSpec job(const std::string& client_id = "") {
  JobSpec s;
  s.task_name = "t.py";
  s.task_source = "import torch";
  s.candidate_name = "c.cpp";
  s.candidate_source = "int x;";
  s.format = common::Format::HOST;
  s.options = nlohmann::json::object();
  s.client_id = client_id;
  return s;
}

class QueueTest : public ::testing::Test {
 protected:
  ScratchDir scratch;
  RedisServer redis{scratch.path() / "redis"};
  JobQueue queue{"test"};
  std::unique_ptr<RedisConnection> c = redis.connect();

  void SetUp() override {
    ASSERT_TRUE(redis.up()) << redis.log();
    ASSERT_TRUE(queue.ensure_group(*c));
  }

  std::vector<std::string> submit(const std::vector<JobSpec>& jobs, const std::string& batch = "") {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < jobs.size(); ++i) ids.push_back(random_id("j-"));
    auto r = queue.submit(*c, jobs, ids, batch, 3600);
    EXPECT_TRUE(r) << r.error().message;
    std::vector<std::string> out;
    EXPECT_FALSE(r->conflict);
    for (const auto& [id, existing] : r->jobs) out.push_back(id);
    return out;
  }
  Delivery take(const std::string& consumer) {
    auto d = queue.read_next(*c, consumer, 100);
    EXPECT_TRUE(d && *d) << "no job for " << consumer;
    return d && *d ? **d : Delivery{};
  }
  bool store(const Delivery& d, const std::string& status, const std::string& consumer = "w1") {
    JobQueue::Stored s{&d, nlohmann::json{{"status", status}, {"by", consumer}}.dump(), status, 0.2, false, consumer, 3600};
    auto r = queue.store_result(*c, s);
    EXPECT_TRUE(r) << r.error().message;
    return r && *r;
  }
};

TEST_F(QueueTest, AClientIdEnqueuesOnce) {
  auto first = submit({job("run1/t0")});
  std::vector<std::string> again_ids{random_id("j-")};
  auto again = queue.submit(*c, {job("run1/t0")}, again_ids, "", 3600);
  ASSERT_TRUE(again);
  ASSERT_FALSE(again->conflict);
  EXPECT_EQ(again->jobs[0].first, first[0]);
  EXPECT_TRUE(again->jobs[0].second);
  EXPECT_EQ(*queue.depth(*c), 1);
  auto stats = queue.stats(*c, 10000);
  ASSERT_TRUE(stats);
  long long submitted = -1;
  for (const auto& [k, v] : stats->counters) submitted = k == "submitted" ? v : submitted;
  EXPECT_EQ(submitted, 1);
}

// An idempotency key is its token's: another token's same key is another job; the same key with
// other content is a conflict, and a request holding one enqueues none of its jobs.
TEST_F(QueueTest, AClientIdIsScopedToItsTokenAndBoundToItsContent) {
  const auto ids = [](std::size_t n) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(random_id("j-"));
    return out;
  };
  auto mine = queue.submit(*c, {job("run1/t0")}, ids(1), "", 3600, "t-aaaa");
  auto theirs = queue.submit(*c, {job("run1/t0")}, ids(1), "", 3600, "t-bbbb");
  ASSERT_TRUE(mine && theirs);
  EXPECT_NE(mine->jobs[0].first, theirs->jobs[0].first);
  EXPECT_FALSE(theirs->jobs[0].second);
  JobSpec other = job("run1/t0");
  other.candidate_source = "int y;";
  auto conflict = queue.submit(*c, {job("run1/t1"), other}, ids(2), "b-1", 3600, "t-aaaa");
  ASSERT_TRUE(conflict);
  ASSERT_TRUE(conflict->conflict);
  EXPECT_EQ(*conflict->conflict, 1u);
  EXPECT_TRUE(conflict->jobs.empty());
  EXPECT_EQ(*queue.depth(*c), 2);  // run1/t1 was not enqueued either
  JobSpec twice = job("run1/t2");
  twice.candidate_source = "int z;";
  auto in_one_request = queue.submit(*c, {job("run1/t2"), twice}, ids(2), "", 3600, "t-aaaa");
  ASSERT_TRUE(in_one_request);
  EXPECT_EQ(in_one_request->conflict, std::optional<std::size_t>(1));
  EXPECT_EQ(*queue.depth(*c), 2);
  // Past one script call's chunk of 64: the conflict in the second chunk stops the first too.
  std::vector<JobSpec> many;
  for (int i = 0; i < 70; ++i) many.push_back(job("run2/t" + std::to_string(i)));
  many.push_back(other);
  auto chunked = queue.submit(*c, many, ids(many.size()), "", 3600, "t-aaaa");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->conflict, std::optional<std::size_t>(70));
  EXPECT_EQ(*queue.depth(*c), 2);
}

TEST_F(QueueTest, AResultIsStoredOnceAndAcknowledgedWithIt) {
  auto ids = submit({job()});
  Delivery d = take("w1");
  EXPECT_EQ(d.job_id, ids[0]);
  EXPECT_EQ(d.deliveries, 1);
  auto spec = queue.start(*c, d.job_id, "w1");
  ASSERT_TRUE(spec && *spec);
  EXPECT_EQ((**spec)["candidate_source"], "int x;");
  EXPECT_EQ((*queue.get(*c, d.job_id))->state, "running");
  EXPECT_TRUE(store(d, "OK", "w1"));
  EXPECT_EQ(*queue.depth(*c), 0);  // acknowledged and deleted in the same script
  EXPECT_FALSE(store(d, "TIMEOUT", "w2"));  // a duplicate from redelivery: the first result stays
  auto view = queue.get(*c, d.job_id);
  ASSERT_TRUE(view && *view);
  EXPECT_EQ((*view)->state, "done");
  EXPECT_EQ((*view)->result["status"], "OK");
  EXPECT_EQ((*view)->finished_by, "w1");
  EXPECT_EQ((*view)->attempts, 1);
  auto again = queue.start(*c, d.job_id, "w3");  // a late redelivery finds it done ...
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  JobQueue::Stored ack_only{&d, "", "", 0, false, "w3", 3600};  // ... and only acknowledges
  auto acked = queue.store_result(*c, ack_only);
  ASSERT_TRUE(acked);
  EXPECT_FALSE(*acked);
  EXPECT_EQ((*queue.get(*c, d.job_id))->result["status"], "OK");
  auto stats = queue.stats(*c, 10000);
  ASSERT_TRUE(stats);
  long long ok = 0, timeout = 0, evaluations = 0;
  for (const auto& [k, v] : stats->counters) {
    ok += k == "status:OK" ? v : 0;
    timeout += k == "status:TIMEOUT" ? v : 0;
    evaluations += k == "evaluations" ? v : 0;
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(timeout, 0);
  EXPECT_EQ(evaluations, 2);  // both evaluations counted, one result
  EXPECT_EQ(stats->evaluation_hist.value("count", ""), "1");
}

TEST_F(QueueTest, ASilentHoldersJobIsClaimedAHeartbeatingOnesIsNot) {
  submit({job(), job()});
  Delivery silent = take("dead-worker");
  Delivery alive = take("live-worker");
  for (int i = 0; i < 6; ++i) {  // 600 ms: the live worker touches its entry, the dead one cannot
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(queue.touch(*c, "live-worker", {alive.entry_id}));
  }
  auto claimed = queue.claim_stale(*c, "rescuer", 400);
  ASSERT_TRUE(claimed && *claimed);
  EXPECT_EQ((*claimed)->job_id, silent.job_id);
  EXPECT_EQ((*claimed)->deliveries, 2);
  EXPECT_EQ((*claimed)->previous_owner, "dead-worker");
  auto nothing = queue.claim_stale(*c, "rescuer", 400);
  ASSERT_TRUE(nothing);
  EXPECT_FALSE(*nothing);  // the live worker's job stays with it
  // A touch by the former holder does not take a claimed job back.
  ASSERT_TRUE(queue.touch(*c, "dead-worker", {silent.entry_id}));
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  auto reclaimed = queue.claim_stale(*c, "third", 400);
  ASSERT_TRUE(reclaimed && *reclaimed);
  EXPECT_EQ((*reclaimed)->previous_owner, "rescuer");
  EXPECT_EQ((*reclaimed)->deliveries, 3);
}

TEST_F(QueueTest, BatchesCountEachJobOnceAndAResubmittedBatchSeesFinishedJobs) {
  auto ids = submit({job("b/0"), job("b/1"), job("b/2")}, "batch-one");
  auto progress = queue.batch_progress(*c, "batch-one");
  ASSERT_TRUE(progress && *progress);
  EXPECT_EQ(**progress, (std::pair<long long, long long>{3, 0}));
  Delivery d0 = take("w"), d1 = take("w");
  store(d1, "WRONG_OUTPUT");
  store(d0, "OK");
  store(d0, "OK");  // duplicate
  EXPECT_EQ(**queue.batch_progress(*c, "batch-one"), (std::pair<long long, long long>{3, 2}));
  // The client retries the whole batch (its answer was lost): nothing is enqueued twice, and the
  // new batch already counts the two finished jobs.
  auto again = submit({job("b/0"), job("b/1"), job("b/2")}, "batch-two");
  EXPECT_EQ(again, ids);
  EXPECT_EQ(*queue.depth(*c), 1);
  EXPECT_EQ(**queue.batch_progress(*c, "batch-two"), (std::pair<long long, long long>{3, 2}));
  Delivery d2 = take("w");
  store(d2, "TIMEOUT");
  EXPECT_EQ(**queue.batch_progress(*c, "batch-one"), (std::pair<long long, long long>{3, 3}));
  EXPECT_EQ(**queue.batch_progress(*c, "batch-two"), (std::pair<long long, long long>{3, 3}));
  auto jobs = queue.batch_jobs(*c, "batch-two");
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ((*jobs)[i].id, ids[i]);  // submission order
  EXPECT_EQ((*jobs)[0].result["status"], "OK");
  EXPECT_EQ((*jobs)[1].result["status"], "WRONG_OUTPUT");
  EXPECT_EQ((*jobs)[2].result["status"], "TIMEOUT");
  EXPECT_FALSE(*queue.batch_progress(*c, "no-such-batch"));
}

TEST_F(QueueTest, WorkersAreListedWithTheirHeartbeat) {
  ASSERT_TRUE(queue.heartbeat(*c, "host/1/gpu0", {{"device", "cuda"}, {"pid", 1}}));
  auto workers = queue.workers(*c, 10000);
  ASSERT_TRUE(workers);
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0]["name"], "host/1/gpu0");
  EXPECT_EQ((*workers)[0]["device"], "cuda");
  EXPECT_TRUE((*workers)[0]["alive"].get<bool>());
  EXPECT_EQ(queue.stats(*c, 10000)->workers_alive, 1);
  ASSERT_TRUE(queue.leave(*c, "host/1/gpu0"));
  EXPECT_EQ(queue.stats(*c, 10000)->workers_alive, 0);
}

// A worker that died without leaving stays listed, not alive, for JobQueue::kForgetWorkerAfterMs
// (10 minutes), then is no longer listed, and the next heartbeat of another forgets it.
TEST_F(QueueTest, ADeadWorkerIsForgottenAfterTenMinutes) {
  ASSERT_TRUE(queue.heartbeat(*c, "host/2/gpu0", {{"pid", 2}}));
  ASSERT_TRUE(queue.heartbeat(*c, "host/3/gpu0", {{"pid", 3}}));
  const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  ASSERT_TRUE(c->command({"ZADD", "test:workers:seen", std::to_string(now_ms - 5 * 60 * 1000), "host/2/gpu0"}));
  auto workers = queue.workers(*c, 10000);
  ASSERT_TRUE(workers);
  ASSERT_EQ(workers->size(), 2u);
  for (const auto& w : *workers) EXPECT_EQ(w["alive"].get<bool>(), w["name"] == "host/3/gpu0") << w;

  ASSERT_TRUE(c->command({"ZADD", "test:workers:seen", std::to_string(now_ms - 11 * 60 * 1000), "host/2/gpu0"}));
  workers = queue.workers(*c, 10000);
  ASSERT_TRUE(workers);
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0]["name"], "host/3/gpu0");
  ASSERT_TRUE(queue.heartbeat(*c, "host/3/gpu0", {{"pid", 3}}));
  auto info = c->command({"HEXISTS", "test:workers", "host/2/gpu0"});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->integer, 0);
}

}  // namespace
}  // namespace kernelrl::service::testing
