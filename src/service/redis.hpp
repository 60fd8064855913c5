// A small synchronous Redis client over hiredis: one connection, commands as argument vectors,
// pipelines and Lua scripts (EVALSHA with a fallback to EVAL after a Redis restart), replies copied
// into plain values. A lost connection is re-established on the next call; a command is never
// resent by this layer (a caller retries only what is idempotent). Not thread-safe: one connection
// per thread, or a RedisPool.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

struct redisContext;

namespace kernelrl::service {

// redis://[:PASSWORD@]HOST[:PORT][/DB]
struct RedisUrl {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string password;
  std::string text;  // as given, password masked, for messages

  static common::Expected<RedisUrl> parse(const std::string& url);
  bool loopback() const;  // 127.0.0.0/8, ::1 or localhost: only this host's processes reach it
};

// How a command reaches Redis: a URL, a file holding the password (Redis's requirepass; its first
// line), and whether a Redis off this host may have none.
struct RedisAccess {
  std::string url = "redis://127.0.0.1:6379";
  std::string password_file;
  bool without_password = false;
};

// The URL to connect to, its password read from the file where one is given. A Redis off this host
// without a password is refused unless `without_password`: whoever reaches it writes jobs and
// results. Errors name the option or file at fault.
common::Expected<RedisUrl> resolve_redis(const RedisAccess& access);

struct RedisReply {
  enum class Type { NIL, STRING, STATUS, ERROR, INTEGER, ARRAY };
  Type type = Type::NIL;
  std::string str;          // STRING, STATUS, ERROR
  long long integer = 0;    // INTEGER
  std::vector<RedisReply> elements;  // ARRAY

  bool is_nil() const { return type == Type::NIL; }
  // The string of a STRING or STATUS reply, the decimal text of an INTEGER, "" otherwise.
  std::string text() const;
  // An INTEGER, or a STRING holding a decimal number; `fallback` otherwise.
  long long as_int(long long fallback = 0) const;
};

// A Lua script, run by hash (EVALSHA): each connection loads it on first use (SCRIPT LOAD) and
// again when Redis has forgotten it (NOSCRIPT, after a restart).
struct RedisScript {
  std::string source;
};

class RedisConnection {
 public:
  // Connects (and AUTH/SELECT); an Error names the URL. `timeout_s` bounds connecting and each
  // reply; a BLOCK command needs a longer one (command_timeout()).
  static common::Expected<std::unique_ptr<RedisConnection>> connect(const RedisUrl& url, double timeout_s = 5);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Runs one command. An Error is either a lost connection (is_connection_error(), the next call
  // reconnects) or Redis's own error reply, both prefixed with the URL and the command name.
  common::Expected<RedisReply> command(const std::vector<std::string>& argv);
  // Sends all commands, then reads all replies (error replies stay replies, in order).
  common::Expected<std::vector<RedisReply>> pipeline(const std::vector<std::vector<std::string>>& commands);
  common::Expected<RedisReply> eval(const RedisScript& script, const std::vector<std::string>& keys,
                                    const std::vector<std::string>& args);

  // The reply timeout for the following commands (e.g. the block time of XREADGROUP plus a margin).
  void set_timeout(double timeout_s);
  // Whether the last Error was a broken connection rather than an error reply.
  bool last_error_was_connection() const { return last_error_connection_; }
  const RedisUrl& url() const { return url_; }

 private:
  explicit RedisConnection(RedisUrl url, double timeout_s) : url_(std::move(url)), timeout_s_(timeout_s) {}
  common::Fallible ensure_connected();
  common::Error connection_error(const std::string& what);
  void drop();

  RedisUrl url_;
  double timeout_s_;
  redisContext* ctx_ = nullptr;
  bool last_error_connection_ = false;
  std::map<const RedisScript*, std::string> loaded_;  // script -> SHA1 on this connection's server
};

// A connection subscribed to one channel (pub/sub). Not thread-safe; one thread waits on it.
class RedisSubscriber {
 public:
  RedisSubscriber(RedisUrl url, std::string channel) : url_(std::move(url)), channel_(std::move(channel)) {}
  ~RedisSubscriber();
  RedisSubscriber(const RedisSubscriber&) = delete;
  RedisSubscriber& operator=(const RedisSubscriber&) = delete;

  // The next message published on the channel, waiting up to timeout_ms; nullopt when none came.
  // Connects (and subscribes) first when needed; an Error is a lost connection (messages published
  // until the next call reconnects are missed: callers also poll).
  common::Expected<std::optional<std::string>> next(int timeout_ms);

 private:
  RedisUrl url_;
  std::string channel_;
  redisContext* ctx_ = nullptr;
};

// Connections shared by request threads: lease() hands out an idle one (or opens one); the lease
// gives it back when destroyed. Thread-safe.
class RedisPool {
 public:
  explicit RedisPool(RedisUrl url, double timeout_s = 5) : url_(std::move(url)), timeout_s_(timeout_s) {}

  class Lease {
   public:
    Lease(RedisPool& pool, std::unique_ptr<RedisConnection> c) : pool_(&pool), c_(std::move(c)) {}
    Lease(Lease&&) = default;
    ~Lease();
    RedisConnection* operator->() const { return c_.get(); }
    RedisConnection& operator*() const { return *c_; }

   private:
    RedisPool* pool_;
    std::unique_ptr<RedisConnection> c_;
  };
  common::Expected<Lease> lease();
  const RedisUrl& url() const { return url_; }

 private:
  RedisUrl url_;
  double timeout_s_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
};

}  // namespace kernelrl::service
