// A fixed pool of compile threads (one per core by default) in front of a Compiler. Identical
// requests in flight at the same time are compiled once.
#pragma once

#include <future>
#include <memory>

#include "compile/compiler.hpp"

namespace kernelrl::compile {

class CompilePool {
 public:
  // n_threads 0 = std::thread::hardware_concurrency().
  CompilePool(const Compiler& compiler, unsigned n_threads = 0);
  ~CompilePool();  // finishes queued work, then joins
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues a compile; thread-safe. The future's t_compile_ms covers the compile, not the wait.
  std::shared_future<CompileResult> submit(std::string source, std::string display_name, CompileOptions options);

  unsigned n_threads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernelrl::compile
