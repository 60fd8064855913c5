#include "service/queue.hpp"

#include <cstdio>
#include <map>
#include <random>

namespace kernelrl::service {

namespace {

// Server time in milliseconds, for every timestamp the scripts write (no clock skew between hosts).
#define KRL_NOW "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

// KEYS: stream, stats. ARGV: prefix, batch ("" none), ttl_s, scope (the token's), mode ("check":
// write nothing), then (id, spec, client_id) per job. A client_id is the scope's own: the same key
// from another token names another job. Returns {"conflict", k} when the k-th job's client_id names
// a job of other content (nothing written), else {"ok", id, existing, ...}.
const RedisScript kSubmit{KRL_NOW R"lua(
local p, batch, ttl, scope, mode = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local function client_key(cid) return p .. ':client:' .. scope .. ':' .. cid end
local function known(cid)
  if cid == '' then return nil end
  local prev = redis.call('GET', client_key(cid))
  if prev and redis.call('EXISTS', p .. ':job:' .. prev) == 1 then return prev end
  return nil
end
local k = 0
for i = 6, #ARGV, 3 do
  local prev = known(ARGV[i + 2])
  if prev and redis.call('HGET', p .. ':job:' .. prev, 'spec') ~= ARGV[i + 1] then return {'conflict', k} end
  k = k + 1
end
if mode == 'check' then return {'ok'} end
local out, n_new, n_jobs = {'ok'}, 0, 0
for i = 6, #ARGV, 3 do
  local id, spec, cid = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local existing = false
  n_jobs = n_jobs + 1
  local prev = known(cid)
  if prev then id = prev; existing = true end
  local jk = p .. ':job:' .. id
  if not existing then
    redis.call('HSET', jk, 'spec', spec, 'state', 'queued', 'submitted_ms', now, 'client_id', cid, 'attempts', 0)
    if cid ~= '' then redis.call('SET', client_key(cid), id) end
    redis.call('XADD', KEYS[1], '*', 'job', id)
    n_new = n_new + 1
  end
  if batch ~= '' then
    redis.call('RPUSH', p .. ':batch:' .. batch .. ':ids', id)
    if redis.call('HEXISTS', jk, 'result') == 1 then
      redis.call('HINCRBY', p .. ':batch:' .. batch, 'n_done', 1)
    else
      redis.call('SADD', jk .. ':batches', batch)
    end
  end
  out[#out + 1] = id
  out[#out + 1] = existing and 1 or 0
end
if batch ~= '' then
  local bk = p .. ':batch:' .. batch
  redis.call('HINCRBY', bk, 'n_jobs', n_jobs)
  redis.call('HSETNX', bk, 'n_done', 0)
  if ttl > 0 then redis.call('EXPIRE', bk, ttl); redis.call('EXPIRE', bk .. ':ids', ttl) end
end
redis.call('HINCRBY', KEYS[2], 'submitted', n_new)
return out
)lua"};

// KEYS: stream. ARGV: group, consumer, min idle ms. Returns {entry, job, deliveries, previous owner} or {}.
const RedisScript kClaim{R"lua(
local p = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', 1)
if #p == 0 then return {} end
local id, owner, deliveries = p[1][1], p[1][2], p[1][4]
local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], id)
if #claimed == 0 or not claimed[1] then return {} end
local fields, job = claimed[1][2], ''
for i = 1, #fields, 2 do if fields[i] == 'job' then job = fields[i + 1] end end
return {id, job, deliveries + 1, owner}
)lua"};

// KEYS: job key. ARGV: consumer. Returns the spec, or nil (gone or already done).
const RedisScript kStart{KRL_NOW R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'result') == 1 then return false end
redis.call('HSET', KEYS[1], 'state', 'running', 'worker', ARGV[1], 'started_ms', now)
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return redis.call('HGET', KEYS[1], 'spec')
)lua"};

// KEYS: stream, stats. ARGV: prefix, group, entry, job id, result ("" only acknowledges), status,
// evaluation s, ttl s, poisoned, consumer, bucket bounds (comma separated). Returns 1 when this call
// stored the result.
const RedisScript kStore{KRL_NOW R"lua(
local p, jk = ARGV[1], ARGV[1] .. ':job:' .. ARGV[4]
local function observe(key, v)
  local field = 'le:+Inf'
  for b in string.gmatch(ARGV[11], '[^,]+') do
    if v <= tonumber(b) then field = 'le:' .. b; break end
  end
  redis.call('HINCRBY', key, field, 1)
  redis.call('HINCRBY', key, 'count', 1)
  redis.call('HINCRBYFLOAT', key, 'sum', v)
end
local stored = 0
if ARGV[5] ~= '' and redis.call('EXISTS', jk) == 1 and redis.call('HSETNX', jk, 'result', ARGV[5]) == 1 then
  stored = 1
  redis.call('HSET', jk, 'state', 'done', 'status', ARGV[6], 'finished_ms', now, 'finished_by', ARGV[10])
  redis.call('HINCRBY', KEYS[2], 'status:' .. ARGV[6], 1)
  if ARGV[9] == '1' then redis.call('HINCRBY', KEYS[2], 'poisoned', 1)
  else observe(p .. ':hist:evaluation', tonumber(ARGV[7])) end
  local submitted = tonumber(redis.call('HGET', jk, 'submitted_ms'))
  if submitted then observe(p .. ':hist:latency', (now - submitted) / 1000) end
  for _, b in ipairs(redis.call('SMEMBERS', jk .. ':batches')) do
    redis.call('HINCRBY', p .. ':batch:' .. b, 'n_done', 1)
  end
  local ttl = tonumber(ARGV[8])
  if ttl > 0 then
    redis.call('EXPIRE', jk, ttl)
    redis.call('EXPIRE', jk .. ':batches', ttl)
    local cid = redis.call('HGET', jk, 'client_id')
    if cid and cid ~= '' then redis.call('EXPIRE', p .. ':client:' .. cid, ttl) end
  end
  redis.call('PUBLISH', p .. ':done', ARGV[4])
end
if ARGV[9] ~= '1' and ARGV[5] ~= '' then redis.call('HINCRBY', KEYS[2], 'evaluations', 1) end
redis.call('XACK', KEYS[1], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return stored
)lua"};

// KEYS: stream. ARGV: group, consumer, entry ids... Resets the idle time of those still ours.
const RedisScript kTouch{R"lua(
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #p == 1 then redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID') end
end
return 1
)lua"};

// KEYS: workers hash, seen zset. ARGV: consumer, info JSON, forget-after ms. Forgets workers
// silent for longer than that.
const RedisScript kHeartbeat{KRL_NOW R"lua(
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[1])
local before = now - tonumber(ARGV[3])
for _, n in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', before)) do redis.call('HDEL', KEYS[1], n) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', before)
return now
)lua"};

// KEYS: stream, stats, evaluation hist, latency hist, seen. ARGV: group, alive window ms.
const RedisScript kStats{KRL_NOW R"lua(
local pending = 0
local xp = redis.pcall('XPENDING', KEYS[1], ARGV[1])
if type(xp) == 'table' and xp[1] then pending = xp[1] end
return {redis.call('XLEN', KEYS[1]), pending, redis.call('ZCOUNT', KEYS[5], now - tonumber(ARGV[2]), '+inf'),
        redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]), now}
)lua"};

std::string bounds_csv() {
  std::string out;
  for (double b : latency_buckets_s()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", b);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

nlohmann::json pairs_to_json(const RedisReply& r) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].text()] = r.elements[i + 1].text();
  return out;
}

double to_double(const std::string& s) { return s.empty() ? 0 : std::strtod(s.c_str(), nullptr); }

JobView view_from(const std::string& id, const std::vector<RedisReply>& fields) {
  // fields: state, attempts, result, finished_by, submitted_ms, finished_ms, worker
  JobView v;
  v.id = id;
  v.state = fields[0].text();
  v.attempts = fields[1].as_int();
  if (!fields[2].is_nil()) {
    v.result = nlohmann::json::parse(fields[2].text(), nullptr, false);
    if (v.result.is_discarded()) v.result = {{"could_not_evaluate", "the stored result is not JSON"}};
    v.state = "done";  // a result is the last word, whatever a late "running" mark says
  }
  v.finished_by = fields[3].text();
  v.submitted_ms = to_double(fields[4].text());
  v.finished_ms = to_double(fields[5].text());
  v.worker = fields[6].text();
  return v;
}

const std::vector<std::string> kViewFields = {"state",        "attempts",    "result", "finished_by",
                                              "submitted_ms", "finished_ms", "worker"};

}  // namespace

std::string random_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng{(static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return prefix + buf;
}

const std::vector<double>& latency_buckets_s() {
  static const std::vector<double> b = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};
  return b;
}

common::Fallible JobQueue::ensure_group(RedisConnection& c) const {
  auto r = c.command({"XGROUP", "CREATE", stream(), kGroup, "0", "MKSTREAM"});
  if (!r && r.error().message.find("BUSYGROUP") == std::string::npos) return r.error();
  return common::Ok{};
}

common::Expected<JobQueue::Submission> JobQueue::submit(RedisConnection& c, const std::vector<JobSpec>& jobs,
                                                        const std::vector<std::string>& new_ids, const std::string& batch,
                                                        long long ttl_s, const std::string& scope) const {
  Submission out;
  std::vector<std::string> specs;
  std::map<std::string, std::size_t> first_of;  // a client_id given twice in this request must carry one content
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    specs.push_back(to_stored(jobs[i]).dump());
    if (jobs[i].client_id.empty()) continue;
    auto [at, fresh] = first_of.emplace(jobs[i].client_id, i);
    if (!fresh && specs[at->second] != specs[i]) {
      out.conflict = i;
      return out;
    }
  }
  constexpr std::size_t kChunk = 64;  // jobs per script call: fewer round trips, short enough not to stall Redis
  // Every chunk checked first, then written (each write checks its chunk again, atomically): a
  // request with a conflicting job enqueues none of its jobs.
  for (const char* mode : {"check", "submit"}) {
    for (std::size_t start = 0; start < jobs.size(); start += kChunk) {
      std::vector<std::string> args{p_, batch, std::to_string(ttl_s), scope, mode};
      for (std::size_t i = start; i < std::min(jobs.size(), start + kChunk); ++i) {
        args.push_back(new_ids[i]);
        args.push_back(specs[i]);
        args.push_back(jobs[i].client_id);
      }
      auto r = c.eval(kSubmit, {stream(), p_ + ":stats"}, args);
      if (!r) return r.error();
      if (r->elements.empty()) return common::make_error("the submit script answered nothing");
      if (r->elements[0].text() == "conflict") {
        out.conflict = start + static_cast<std::size_t>(r->elements.size() > 1 ? r->elements[1].as_int() : 0);
        return out;
      }
      for (std::size_t i = 1; i + 1 < r->elements.size(); i += 2) {
        out.jobs.emplace_back(r->elements[i].text(), r->elements[i + 1].as_int() == 1);
      }
    }
  }
  return out;
}

common::Expected<long long> JobQueue::depth(RedisConnection& c) const {
  auto r = c.command({"XLEN", stream()});
  if (!r) return r.error();
  return r->as_int();
}

common::Expected<std::optional<Delivery>> JobQueue::read_next(RedisConnection& c, const std::string& consumer,
                                                              long block_ms) const {
  auto r = c.command({"XREADGROUP", "GROUP", kGroup, consumer, "COUNT", "1", "BLOCK", std::to_string(block_ms),
                      "STREAMS", stream(), ">"});
  if (!r) return r.error();
  if (r->is_nil() || r->elements.empty() || r->elements[0].elements.size() < 2) return std::optional<Delivery>{};
  const auto& entries = r->elements[0].elements[1].elements;
  if (entries.empty() || entries[0].elements.size() < 2) return std::optional<Delivery>{};
  Delivery d;
  d.entry_id = entries[0].elements[0].text();
  const auto& fields = entries[0].elements[1].elements;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    if (fields[i].text() == "job") d.job_id = fields[i + 1].text();
  }
  return std::optional<Delivery>{d};
}

common::Expected<std::optional<Delivery>> JobQueue::claim_stale(RedisConnection& c, const std::string& consumer,
                                                                long long min_idle_ms) const {
  auto r = c.eval(kClaim, {stream()}, {kGroup, consumer, std::to_string(min_idle_ms)});
  if (!r) return r.error();
  if (r->elements.size() < 4) return std::optional<Delivery>{};
  Delivery d;
  d.entry_id = r->elements[0].text();
  d.job_id = r->elements[1].text();
  d.deliveries = r->elements[2].as_int(1);
  d.previous_owner = r->elements[3].text();
  return std::optional<Delivery>{d};
}

common::Expected<std::optional<nlohmann::json>> JobQueue::start(RedisConnection& c, const std::string& job_id,
                                                                const std::string& consumer) const {
  auto r = c.eval(kStart, {p_ + ":job:" + job_id}, {consumer});
  if (!r) return r.error();
  if (r->is_nil()) return std::optional<nlohmann::json>{};
  auto spec = nlohmann::json::parse(r->text(), nullptr, false);
  if (spec.is_discarded()) return common::make_error("job " + job_id + ": its stored spec is not JSON");
  return std::optional<nlohmann::json>{std::move(spec)};
}

common::Expected<std::optional<nlohmann::json>> JobQueue::peek(RedisConnection& c, const std::string& job_id) const {
  auto r = c.command({"HGET", p_ + ":job:" + job_id, "spec"});
  if (!r) return r.error();
  if (r->is_nil()) return std::optional<nlohmann::json>{};
  auto spec = nlohmann::json::parse(r->text(), nullptr, false);
  if (spec.is_discarded()) return std::optional<nlohmann::json>{};
  return std::optional<nlohmann::json>{std::move(spec)};
}

common::Expected<bool> JobQueue::store_result(RedisConnection& c, const Stored& s) const {
  char eval_s[32];
  std::snprintf(eval_s, sizeof eval_s, "%.6f", s.evaluation_s);
  auto r = c.eval(kStore, {stream(), p_ + ":stats"},
                  {p_, kGroup, s.delivery->entry_id, s.delivery->job_id, s.result_json, s.status, eval_s,
                   std::to_string(s.ttl_s), s.poisoned ? "1" : "0", s.consumer, bounds_csv()});
  if (!r) return r.error();
  return r->as_int() == 1;
}

common::Fallible JobQueue::touch(RedisConnection& c, const std::string& consumer,
                                 const std::vector<std::string>& entry_ids) const {
  if (entry_ids.empty()) return common::Ok{};
  std::vector<std::string> args{kGroup, consumer};
  args.insert(args.end(), entry_ids.begin(), entry_ids.end());
  auto r = c.eval(kTouch, {stream()}, args);
  if (!r) return r.error();
  return common::Ok{};
}

common::Fallible JobQueue::heartbeat(RedisConnection& c, const std::string& consumer, const nlohmann::json& info) const {
  auto r = c.eval(kHeartbeat, {p_ + ":workers", p_ + ":workers:seen"},
                  {consumer, info.dump(), std::to_string(kForgetWorkerAfterMs)});
  if (!r) return r.error();
  return common::Ok{};
}

common::Fallible JobQueue::leave(RedisConnection& c, const std::string& consumer) const {
  auto r = c.pipeline({{"HDEL", p_ + ":workers", consumer}, {"ZREM", p_ + ":workers:seen", consumer}});
  if (!r) return r.error();
  return common::Ok{};
}

common::Expected<std::optional<JobView>> JobQueue::get(RedisConnection& c, const std::string& id) const {
  std::vector<std::string> argv{"HMGET", p_ + ":job:" + id};
  argv.insert(argv.end(), kViewFields.begin(), kViewFields.end());
  auto r = c.command(argv);
  if (!r) return r.error();
  if (r->elements.size() != kViewFields.size() || r->elements[0].is_nil()) return std::optional<JobView>{};
  return std::optional<JobView>{view_from(id, r->elements)};
}

common::Expected<std::optional<std::pair<long long, long long>>> JobQueue::batch_progress(RedisConnection& c,
                                                                                        const std::string& batch) const {
  auto r = c.command({"HMGET", p_ + ":batch:" + batch, "n_jobs", "n_done"});
  if (!r) return r.error();
  if (r->elements.size() != 2 || r->elements[0].is_nil()) return std::optional<std::pair<long long, long long>>{};
  return std::optional<std::pair<long long, long long>>{{r->elements[0].as_int(), r->elements[1].as_int()}};
}

common::Expected<std::vector<JobView>> JobQueue::batch_jobs(RedisConnection& c, const std::string& batch) const {
  auto ids = c.command({"LRANGE", p_ + ":batch:" + batch + ":ids", "0", "-1"});
  if (!ids) return ids.error();
  std::vector<std::vector<std::string>> commands;
  for (const auto& id : ids->elements) {
    std::vector<std::string> argv{"HMGET", p_ + ":job:" + id.text()};
    argv.insert(argv.end(), kViewFields.begin(), kViewFields.end());
    commands.push_back(std::move(argv));
  }
  auto replies = c.pipeline(commands);
  if (!replies) return replies.error();
  std::vector<JobView> out;
  for (std::size_t i = 0; i < replies->size(); ++i) {
    const auto& fields = (*replies)[i].elements;
    if (fields.size() != kViewFields.size() || fields[0].is_nil()) {
      JobView gone;
      gone.id = ids->elements[i].text();
      gone.state = "expired";
      out.push_back(std::move(gone));
      continue;
    }
    out.push_back(view_from(ids->elements[i].text(), fields));
  }
  return out;
}

common::Expected<QueueStats> JobQueue::stats(RedisConnection& c, long long alive_window_ms) const {
  auto r = c.eval(kStats, {stream(), p_ + ":stats", p_ + ":hist:evaluation", p_ + ":hist:latency", p_ + ":workers:seen"},
                  {kGroup, std::to_string(alive_window_ms)});
  if (!r) return r.error();
  if (r->elements.size() < 6) return common::make_error("redis " + c.url().text + ": unexpected statistics reply");
  QueueStats s;
  s.depth = r->elements[0].as_int();
  s.in_flight = r->elements[1].as_int();
  s.workers_alive = r->elements[2].as_int();
  const auto& counters = r->elements[3].elements;
  for (std::size_t i = 0; i + 1 < counters.size(); i += 2) s.counters.emplace_back(counters[i].text(), counters[i + 1].as_int());
  s.evaluation_hist = pairs_to_json(r->elements[4]);
  s.latency_hist = pairs_to_json(r->elements[5]);
  return s;
}

common::Expected<nlohmann::json> JobQueue::workers(RedisConnection& c, long long alive_window_ms) const {
  auto r = c.pipeline({{"HGETALL", p_ + ":workers"}, {"ZRANGE", p_ + ":workers:seen", "0", "-1", "WITHSCORES"}, {"TIME"}});
  if (!r) return r.error();
  for (const auto& reply : *r) {
    if (reply.type == RedisReply::Type::ERROR) return common::make_error("redis " + c.url().text + ": " + reply.str);
  }
  const auto& time = (*r)[2].elements;
  const double now_ms = time.size() == 2 ? to_double(time[0].text()) * 1000 + to_double(time[1].text()) / 1000 : 0;
  nlohmann::json info = pairs_to_json((*r)[0]);
  nlohmann::json out = nlohmann::json::array();
  const auto& seen = (*r)[1].elements;
  for (std::size_t i = 0; i + 1 < seen.size(); i += 2) {
    const std::string name = seen[i].text();
    const double last_ms = to_double(seen[i + 1].text());
    if (now_ms - last_ms > static_cast<double>(kForgetWorkerAfterMs)) continue;
    nlohmann::json w = info.contains(name) ? nlohmann::json::parse(info[name].get<std::string>(), nullptr, false)
                                           : nlohmann::json::object();
    if (w.is_discarded()) w = nlohmann::json::object();
    w["name"] = name;
    w["seconds_since_heartbeat"] = (now_ms - last_ms) / 1000;
    w["alive"] = now_ms - last_ms < static_cast<double>(alive_window_ms);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace kernelrl::service
