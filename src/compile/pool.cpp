// CompilePool: worker threads draining one queue into Compiler::compile. Requests are keyed by
// what decides their result (source, format, arch, flags, limits; not the display name), and a
// request whose key is already queued or compiling gets the same future; requests that differ
// only in their rule set build once.
#include "compile/pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/hash.hpp"

namespace kernelrl::compile {

namespace {

struct Job {
  std::string key;
  std::string build_key;
  std::string source;
  std::string display_name;
  CompileOptions options;
  std::promise<CompileResult> promise;
};

// Everything that can change a compile's result, except the display name: the static checks'
// rule set and system-access rules too, so the same file asked for under two rule sets at once
// gets each its own verdict. Without the rule set (`with_rules` false) it names the build, which
// the rule sets share through the cache.
std::string request_key(const std::string& source, const CompileOptions& o, bool with_rules = true) {
  nlohmann::json j = {
      {"format", std::string(common::to_string(o.format))},
      {"rules", with_rules ? std::string(common::to_string(o.rules)) : std::string()},
      {"system_access_check", o.system_access_check},
      {"cuda_arch", o.cuda_arch},
      {"time_limit_ms", o.time_limit.count()},
      {"memory_limit_bytes", o.memory_limit_bytes},
      {"extra_flags", o.extra_flags},
      {"use_cache", o.use_cache},
  };
  return common::hash_hex(j.dump() + "\n" + source);
}

}  // namespace

struct CompilePool::Impl {
  const Compiler& compiler;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Job> queue;
  std::unordered_map<std::string, std::shared_future<CompileResult>> in_flight;  // queued or compiling
  // Build keys being compiled. A job whose build is already under way waits in the queue while
  // others are taken, and then hits the cache: an audit's three rule sets of one file start
  // together, and three cold builds of it would triple the work.
  std::unordered_set<std::string> building;
  bool stopping = false;
  std::vector<std::thread> threads;

  explicit Impl(const Compiler& c) : compiler(c) {}

  void work() {
    for (;;) {
      Job j;
      {
        std::unique_lock lock(mutex);
        auto next = queue.end();
        ready.wait(lock, [&] {
          next = std::find_if(queue.begin(), queue.end(), [&](const Job& q) { return !building.contains(q.build_key); });
          return next != queue.end() || (stopping && queue.empty());
        });
        if (next == queue.end()) return;  // stopping and drained
        j = std::move(*next);
        queue.erase(next);
        building.insert(j.build_key);
      }
      CompileResult result;
      try {
        result = compiler.compile(j.source, j.display_name, j.options);
      } catch (const std::exception& e) {  // bad_alloc and the like: a result, never a throw into the caller
        result.status = common::Status::COMPILE_ERROR;
        result.message = std::string("internal error while compiling: ") + e.what();
      }
      {
        std::lock_guard lock(mutex);
        in_flight.erase(j.key);
        building.erase(j.build_key);
      }
      ready.notify_all();
      j.promise.set_value(std::move(result));
    }
  }
};

CompilePool::CompilePool(const Compiler& compiler, unsigned n_threads) : impl_(std::make_unique<Impl>(compiler)) {
  if (n_threads == 0) n_threads = std::max(1u, std::thread::hardware_concurrency());
  impl_->threads.reserve(n_threads);
  for (unsigned i = 0; i < n_threads; ++i) impl_->threads.emplace_back([this] { impl_->work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->ready.notify_all();
  for (std::thread& t : impl_->threads) t.join();
}

std::shared_future<CompileResult> CompilePool::submit(std::string source, std::string display_name,
                                                      CompileOptions options) {
  std::string key = request_key(source, options);
  std::lock_guard lock(impl_->mutex);
  if (auto it = impl_->in_flight.find(key); it != impl_->in_flight.end()) return it->second;
  std::string build_key = request_key(source, options, false);
  Job j{key, std::move(build_key), std::move(source), std::move(display_name), std::move(options), {}};
  std::shared_future<CompileResult> future = j.promise.get_future().share();
  impl_->in_flight.emplace(std::move(key), future);
  impl_->queue.push_back(std::move(j));
  impl_->ready.notify_one();
  return future;
}

unsigned CompilePool::n_threads() const { return static_cast<unsigned>(impl_->threads.size()); }

}  // namespace kernelrl::compile
