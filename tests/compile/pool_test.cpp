// CompilePool: concurrent distinct compiles, sharing of identical in-flight requests, draining on
// destruction.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "compile/pool.hpp"
#include "compile_fixture.hpp"

namespace kernelrl::compile {
namespace {

using common::Status;
using testing::host_candidate;

class compile_pool : public testing::compile_fixture {};

TEST_F(compile_pool, PoolCompilesDistinctCandidatesAndSharesIdenticalOnes) {
  Compiler c = compiler();
  constexpr int kDistinct = 6;
  std::vector<std::shared_future<CompileResult>> first, second;
  {
    CompilePool pool(c, 2);
    EXPECT_EQ(pool.n_threads(), 2u);
    for (int i = 0; i < kDistinct; ++i) first.push_back(pool.submit(host_candidate(100 + i), "a.cpp", host_options()));
    // The same requests again while the first ones are queued or compiling; display names differ.
    for (int i = 0; i < kDistinct; ++i) second.push_back(pool.submit(host_candidate(100 + i), "b.cpp", host_options()));
    std::set<std::string> keys;
    for (int i = 0; i < kDistinct; ++i) {
      const CompileResult& a = first[i].get();
      ASSERT_EQ(a.status, Status::OK) << a.message;
      EXPECT_FALSE(a.cache_hit);
      keys.insert(a.key);
    }
    EXPECT_EQ(keys.size(), static_cast<std::size_t>(kDistinct));
    // Each twin was submitted microseconds after its original, long before a compile can finish.
    for (int i = 0; i < kDistinct; ++i) {
      EXPECT_EQ(&first[i].get(), &second[i].get()) << "an identical in-flight request shares the future";
    }

    // Once finished, the same request is a new job that hits the cache.
    CompileResult later = pool.submit(host_candidate(100), "c.cpp", host_options()).get();
    EXPECT_TRUE(later.cache_hit);
  }
  for (auto& f : second) EXPECT_EQ(f.get().status, Status::OK);
}

// The same file under two rule sets (or with and without the system-access rules) is two requests:
// their static checks differ, so neither may take the other's verdict (an audit asks for one file
// under strict, kernelbench and observe at once).
TEST_F(compile_pool, RequestsUnderOtherRulesAreNotShared) {
  Compiler c = compiler();
  CompilePool pool(c, 1);
  CompileOptions strict = host_options(), observe = host_options(), unchecked = host_options();
  observe.rules = common::RuleSet::OBSERVE;
  unchecked.system_access_check = false;
  auto a = pool.submit(host_candidate(300), "a.cpp", strict);
  auto b = pool.submit(host_candidate(300), "a.cpp", observe);
  auto d = pool.submit(host_candidate(300), "a.cpp", unchecked);
  auto e = pool.submit(host_candidate(300), "a.cpp", strict);
  EXPECT_NE(&a.get(), &b.get());
  EXPECT_NE(&a.get(), &d.get());
  EXPECT_EQ(&a.get(), &e.get());
  EXPECT_EQ(b.get().status, Status::OK) << b.get().message;
}

// ...but they build once: the request that comes second waits for the first one's build (the
// pool's other thread takes none of it) and is served from the cache.
TEST_F(compile_pool, RequestsUnderOtherRulesBuildOnce) {
  Compiler c = compiler();
  CompilePool pool(c, 2);
  CompileOptions strict = host_options(), kernelbench = host_options(), observe = host_options();
  kernelbench.rules = common::RuleSet::KERNELBENCH;
  observe.rules = common::RuleSet::OBSERVE;
  auto a = pool.submit(host_candidate(400), "a.cpp", strict);
  auto b = pool.submit(host_candidate(400), "a.cpp", kernelbench);
  auto d = pool.submit(host_candidate(400), "a.cpp", observe);
  int built = 0;
  for (auto* f : {&a, &b, &d}) {
    ASSERT_EQ(f->get().status, Status::OK) << f->get().message;
    built += f->get().cache_hit ? 0 : 1;
  }
  EXPECT_EQ(built, 1) << "one build, two cache hits";
}

TEST_F(compile_pool, PoolDestructorFinishesQueuedWork) {
  Compiler c = compiler();
  std::vector<std::shared_future<CompileResult>> futures;
  {
    CompilePool pool(c, 1);
    for (int i = 0; i < 3; ++i) futures.push_back(pool.submit(host_candidate(200 + i), "x.cpp", host_options()));
  }  // destroyed while work is still queued
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_EQ(f.get().status, Status::OK) << f.get().message;
  }
}

TEST_F(compile_pool, PoolDefaultsToOneThreadPerCore) {
  Compiler c = compiler();
  CompilePool pool(c);
  EXPECT_EQ(pool.n_threads(), std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace kernelrl::compile
