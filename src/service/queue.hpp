// The job queue in Redis, shared by `kernelrl serve` (submits, reads results) and `kernelrl worker
// --redis` (takes jobs, stores results). Every multi-key step is one Lua script, so it is atomic.
//
// Keys (prefix P, default "kernelrl"; a standalone Redis, not Cluster):
//   P:jobs                  stream, one entry {job: ID} per job not yet finished; consumer group "workers"
//   P:job:ID                hash: spec (JobSpec JSON), state (queued|running|done), submitted_ms,
//                           attempts (evaluations started), worker, result (the record), status,
//                           finished_ms, finished_by; expires result_ttl_s after it is done
//   P:job:ID:batches        set of the batches waiting for the job
//   P:client:SCOPE:CID      the job ID of a client's idempotency key (SCOPE: its token's)
//   P:batch:B               hash n_jobs, n_done;  P:batch:B:ids  list of its job IDs in order
//   P:stats                 hash: submitted, evaluations, status:<STATUS>, could_not_evaluate, poisoned
//   P:hist:evaluation, P:hist:latency   histogram buckets "le:<bound>", sum, count (seconds)
//   P:workers, P:workers:seen           worker info (JSON) and last heartbeat (sorted set, ms)
//   channel P:done          the ID of each job as its result is stored
// A stored result is acknowledged (XACK) and its entry deleted in the same script, so "acked"
// implies "stored"; a redelivered duplicate finds the result there and changes nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "service/job_spec.hpp"
#include "service/redis.hpp"

namespace kernelrl::service {

// A fresh random identifier of a job, batch or client key: `prefix` and 32 hex digits.
std::string random_id(const std::string& prefix);

// Histogram bounds (seconds) of evaluation time and submit-to-result latency.
const std::vector<double>& latency_buckets_s();

// A job handed to a worker.
struct Delivery {
  std::string entry_id;        // the stream entry (for XACK)
  std::string job_id;
  long long deliveries = 1;    // times the entry has been handed out, this time included
  std::string previous_owner;  // the consumer that held it before (a claim), "" for a first delivery
};

// What a client sees of one job.
struct JobView {
  std::string id;
  std::string state;           // "queued", "running", "done"
  long long attempts = 0;      // evaluations started (more than 1 after a worker died)
  nlohmann::json result;       // the record (null until done)
  std::string worker;          // the worker that started its latest evaluation
  std::string finished_by;     // the worker that stored the result
  double submitted_ms = 0, finished_ms = 0;  // Redis server time
};

struct QueueStats {
  long long depth = 0;      // entries in the stream: queued or being evaluated
  long long in_flight = 0;  // of those, handed to a worker and not yet acknowledged
  long long workers_alive = 0;
  std::vector<std::pair<std::string, long long>> counters;   // P:stats
  nlohmann::json evaluation_hist, latency_hist;               // bucket -> count, sum, count
};

class JobQueue {
 public:
  explicit JobQueue(std::string prefix = "kernelrl") : p_(std::move(prefix)) {}
  const std::string& prefix() const { return p_; }
  std::string stream() const { return p_ + ":jobs"; }
  static constexpr const char* kGroup = "workers";

  // Creates the stream and the consumer group if missing.
  common::Fallible ensure_group(RedisConnection& c) const;

  // What submit did: (id, existing) per job, in order; or the index of a job whose client_id names a
  // job of other content (then nothing of the request was enqueued).
  struct Submission {
    std::vector<std::pair<std::string, bool>> jobs;
    std::optional<std::size_t> conflict;
  };
  // Enqueues jobs (one script call per chunk). A job whose client_id is known in `scope` (the
  // submitting token's: another token's key names another job) gets that job's ID back and is not
  // enqueued again, if its content is the same. `batch` "" for none.
  common::Expected<Submission> submit(RedisConnection& c, const std::vector<JobSpec>& jobs,
                                      const std::vector<std::string>& new_ids, const std::string& batch, long long ttl_s,
                                      const std::string& scope = "open") const;
  common::Expected<long long> depth(RedisConnection& c) const;

  // Worker side. read_next blocks up to block_ms for a new entry; claim_stale takes the oldest
  // entry idle for min_idle_ms (its holder is presumed dead). nullopt: nothing to do.
  common::Expected<std::optional<Delivery>> read_next(RedisConnection& c, const std::string& consumer, long block_ms) const;
  common::Expected<std::optional<Delivery>> claim_stale(RedisConnection& c, const std::string& consumer,
                                                        long long min_idle_ms) const;
  // Marks the job running and returns its stored spec; nullopt when the job is gone or already has
  // a result (a duplicate: acknowledge it with store_result and move on).
  common::Expected<std::optional<nlohmann::json>> start(RedisConnection& c, const std::string& job_id,
                                                        const std::string& consumer) const;
  // The stored spec, without marking anything (nullopt: the job is gone).
  common::Expected<std::optional<nlohmann::json>> peek(RedisConnection& c, const std::string& job_id) const;
  // Stores the record unless one is there, then acknowledges and deletes the entry (an empty
  // result_json only acknowledges). Returns whether this call stored it. Idempotent: safe to retry
  // after a lost connection.
  struct Stored {
    const Delivery* delivery;
    std::string result_json;
    std::string status;     // "OK", ..., or "could_not_evaluate"
    double evaluation_s = 0;
    bool poisoned = false;  // a RUNTIME_ERROR for a job that ended max_attempts workers
    std::string consumer;
    long long ttl_s = 0;
  };
  common::Expected<bool> store_result(RedisConnection& c, const Stored& s) const;
  // Resets the idle time of entries this consumer still holds (so only dead workers' jobs are claimed).
  common::Fallible touch(RedisConnection& c, const std::string& consumer, const std::vector<std::string>& entry_ids) const;
  common::Fallible heartbeat(RedisConnection& c, const std::string& consumer, const nlohmann::json& info) const;
  common::Fallible leave(RedisConnection& c, const std::string& consumer) const;

  // Front side.
  common::Expected<std::optional<JobView>> get(RedisConnection& c, const std::string& id) const;
  // {n_jobs, n_done}; nullopt for an unknown batch.
  common::Expected<std::optional<std::pair<long long, long long>>> batch_progress(RedisConnection& c,
                                                                                  const std::string& batch) const;
  common::Expected<std::vector<JobView>> batch_jobs(RedisConnection& c, const std::string& batch) const;
  common::Expected<QueueStats> stats(RedisConnection& c, long long alive_window_ms) const;
  // Every worker heard from within kForgetWorkerAfterMs, with `alive` (heard within alive_window_ms).
  common::Expected<nlohmann::json> workers(RedisConnection& c, long long alive_window_ms) const;
  // A worker silent this long is dropped from the listing and forgotten at the next heartbeat of
  // another (one that stops cleanly leaves at once): long enough to see that one died, not a day.
  static constexpr long long kForgetWorkerAfterMs = 10 * 60 * 1000;
  std::string done_channel() const { return p_ + ":done"; }

 private:
  std::string p_;
};

}  // namespace kernelrl::service
