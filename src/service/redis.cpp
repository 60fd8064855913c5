#include "service/redis.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cmath>
#include <cstdlib>

#include "common/fs.hpp"

namespace kernelrl::service {

namespace {

timeval to_timeval(double s) {
  timeval tv{};
  tv.tv_sec = static_cast<long>(s);
  tv.tv_usec = static_cast<long>((s - std::floor(s)) * 1e6);
  return tv;
}

RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::STRING; break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::STATUS; break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::ERROR; break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::INTEGER; break;
    case REDIS_REPLY_ARRAY: out.type = RedisReply::Type::ARRAY; break;
    default: out.type = RedisReply::Type::NIL; break;
  }
  if (r->str) out.str.assign(r->str, r->len);
  out.integer = r->integer;
  for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
  return out;
}

std::string command_name(const std::vector<std::string>& argv) { return argv.empty() ? "(none)" : argv[0]; }

}  // namespace

std::string RedisReply::text() const {
  if (type == Type::STRING || type == Type::STATUS) return str;
  if (type == Type::INTEGER) return std::to_string(integer);
  return "";
}

long long RedisReply::as_int(long long fallback) const {
  if (type == Type::INTEGER) return integer;
  if (type != Type::STRING || str.empty()) return fallback;
  char* end = nullptr;
  long long v = std::strtoll(str.c_str(), &end, 10);
  return end && *end == '\0' ? v : fallback;
}

common::Expected<RedisUrl> RedisUrl::parse(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) {
    return common::make_error("--redis: '" + url + "' is not a redis://[:PASSWORD@]HOST[:PORT][/DB] URL");
  }
  RedisUrl u;
  std::string rest = url.substr(scheme.size());
  std::string shown_auth;
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = auth.find(':'); colon != std::string::npos) auth = auth.substr(colon + 1);
    u.password = auth;
    shown_auth = ":***@";
  }
  std::string db_part;
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    db_part = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p <= 0 || p > 65535) {
      return common::make_error("--redis: '" + url + "': port '" + port + "' is not a number from 1 to 65535");
    }
    u.port = static_cast<int>(p);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return common::make_error("--redis: '" + url + "' names no host");
  u.host = rest;
  if (!db_part.empty()) {
    char* end = nullptr;
    long db = std::strtol(db_part.c_str(), &end, 10);
    if (*end != '\0' || db < 0) return common::make_error("--redis: '" + url + "': database '" + db_part + "' is not a number");
    u.db = static_cast<int>(db);
  }
  u.text = scheme + shown_auth + u.host + ":" + std::to_string(u.port) + (u.db ? "/" + std::to_string(u.db) : "");
  return u;
}

bool RedisUrl::loopback() const {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

common::Expected<RedisUrl> resolve_redis(const RedisAccess& access) {
  auto url = RedisUrl::parse(access.url);
  if (!url) return url.error();
  if (!access.password_file.empty()) {
    auto text = common::read_file(access.password_file, 4096);
    if (!text) return common::make_error("--redis-password-file: " + text.error().message);
    std::string password = text->substr(0, text->find('\n'));
    while (!password.empty() && (password.back() == '\r' || password.back() == ' ')) password.pop_back();
    if (password.empty()) {
      return common::make_error("--redis-password-file: " + access.password_file + ": its first line is empty");
    }
    url->password = password;
    if (url->text.find(":***@") == std::string::npos) url->text.insert(std::string("redis://").size(), ":***@");
  }
  if (url->password.empty() && !url->loopback() && !access.without_password) {
    return common::make_error("--redis: " + url->text + " is reached without a password: whoever reaches that Redis "
                              "can write jobs and results. Give --redis-password-file FILE (the password of Redis's "
                              "requirepass), or --redis-without-password where only the service's hosts can reach it");
  }
  return url;
}

common::Expected<std::unique_ptr<RedisConnection>> RedisConnection::connect(const RedisUrl& url, double timeout_s) {
  std::unique_ptr<RedisConnection> c(new RedisConnection(url, timeout_s));
  if (auto s = c->ensure_connected(); !s) return s.error();
  return c;
}

RedisConnection::~RedisConnection() { drop(); }

void RedisConnection::drop() {
  if (ctx_) redisFree(ctx_);
  ctx_ = nullptr;
  loaded_.clear();  // a new connection may reach a restarted server that forgot the scripts
}

common::Error RedisConnection::connection_error(const std::string& what) {
  last_error_connection_ = true;
  std::string detail = ctx_ && ctx_->errstr[0] ? std::string(ctx_->errstr) : "connection lost";
  drop();
  return common::make_error("redis " + url_.text + ": " + what + ": " + detail);
}

common::Fallible RedisConnection::ensure_connected() {
  if (ctx_) return common::Ok{};
  ctx_ = redisConnectWithTimeout(url_.host.c_str(), url_.port, to_timeval(timeout_s_));
  if (!ctx_ || ctx_->err) return connection_error("cannot connect");
  redisSetTimeout(ctx_, to_timeval(timeout_s_));
  redisEnableKeepAlive(ctx_);
  std::vector<std::vector<std::string>> setup;
  if (!url_.password.empty()) setup.push_back({"AUTH", url_.password});
  if (url_.db != 0) setup.push_back({"SELECT", std::to_string(url_.db)});
  for (const auto& argv : setup) {
    auto r = command(argv);
    if (!r) {
      drop();
      return r.error();
    }
  }
  return common::Ok{};
}

void RedisConnection::set_timeout(double timeout_s) {
  timeout_s_ = timeout_s;
  if (ctx_) redisSetTimeout(ctx_, to_timeval(timeout_s));
}

common::Expected<RedisReply> RedisConnection::command(const std::vector<std::string>& argv) {
  last_error_connection_ = false;
  if (auto s = ensure_connected(); !s) return s.error();
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(redisCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  if (!raw) return connection_error(command_name(argv));
  RedisReply reply = copy_reply(raw);
  freeReplyObject(raw);
  if (reply.type == RedisReply::Type::ERROR) {
    return common::make_error("redis " + url_.text + ": " + command_name(argv) + ": " + reply.str);
  }
  return reply;
}

common::Expected<std::vector<RedisReply>> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  last_error_connection_ = false;
  if (auto s = ensure_connected(); !s) return s.error();
  for (const auto& argv : commands) {
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK) {
      return connection_error("pipeline");
    }
  }
  std::vector<RedisReply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || !raw) return connection_error("pipeline");
    replies.push_back(copy_reply(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  return replies;
}

common::Expected<RedisReply> RedisConnection::eval(const RedisScript& script, const std::vector<std::string>& keys,
                                                   const std::vector<std::string>& args) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto it = loaded_.find(&script);
    if (it == loaded_.end()) {
      auto sha = command({"SCRIPT", "LOAD", script.source});
      if (!sha) return sha.error();
      it = loaded_.emplace(&script, sha->str).first;
    }
    std::vector<std::string> argv{"EVALSHA", it->second, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = command(argv);
    if (r || last_error_connection_ || r.error().message.find("NOSCRIPT") == std::string::npos) return r;
    loaded_.erase(&script);  // the server restarted and forgot it: load it again
  }
  return common::make_error("redis " + url_.text + ": a script was forgotten twice in a row");
}

RedisSubscriber::~RedisSubscriber() {
  if (ctx_) redisFree(ctx_);
}

common::Expected<std::optional<std::string>> RedisSubscriber::next(int timeout_ms) {
  auto fail = [&](const std::string& what) -> common::Error {
    std::string detail = ctx_ && ctx_->errstr[0] ? std::string(ctx_->errstr) : "connection lost";
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
    return common::make_error("redis " + url_.text + ": " + what + " " + channel_ + ": " + detail);
  };
  if (!ctx_) {
    ctx_ = redisConnectWithTimeout(url_.host.c_str(), url_.port, to_timeval(5));
    if (!ctx_ || ctx_->err) return fail("cannot subscribe to");
    redisSetTimeout(ctx_, to_timeval(5));
    redisEnableKeepAlive(ctx_);
    if (!url_.password.empty()) {
      auto* r = static_cast<redisReply*>(redisCommand(ctx_, "AUTH %b", url_.password.data(), url_.password.size()));
      const bool ok = r && r->type != REDIS_REPLY_ERROR;
      if (r) freeReplyObject(r);
      if (!ok) return fail("AUTH refused for");
    }
    auto* r = static_cast<redisReply*>(redisCommand(ctx_, "SUBSCRIBE %b", channel_.data(), channel_.size()));
    if (!r) return fail("cannot subscribe to");
    freeReplyObject(r);
  }
  void* raw = nullptr;
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) return fail("reading");
  if (!raw) {
    pollfd pfd{ctx_->fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, timeout_ms);
    if (ready == 0) return std::optional<std::string>{};
    if (ready < 0 || redisGetReply(ctx_, &raw) != REDIS_OK || !raw) return fail("reading");
  }
  RedisReply reply = copy_reply(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  // ["message", channel, payload]
  if (reply.elements.size() == 3 && reply.elements[0].text() == "message") {
    return std::optional<std::string>{reply.elements[2].text()};
  }
  return std::optional<std::string>{};
}

RedisPool::Lease::~Lease() {
  if (!c_ || !pool_) return;
  std::lock_guard<std::mutex> lock(pool_->mutex_);
  pool_->idle_.push_back(std::move(c_));
}

common::Expected<RedisPool::Lease> RedisPool::lease() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(c));
    }
  }
  auto c = RedisConnection::connect(url_, timeout_s_);
  if (!c) return c.error();
  return Lease(*this, std::move(*c));
}

}  // namespace kernelrl::service
