// Memory two processes share after a fork, and doorbells in it: how an evaluating child hands a
// call to the separate process that runs the candidate (eval/host_runner.hpp) and learns that the
// call ended, without a system call on the fast path (both sides spin first, then sleep on a futex).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

// An anonymous MAP_SHARED mapping: a process forked after it sees the same pages at the same
// address. Or pages in a memory file (memfd): a program started with exec maps them through the
// descriptor it inherits. Unmapped (and the descriptor closed) on destruction; move-only.
class SharedPages {
 public:
  static common::Expected<SharedPages> create(std::size_t n_bytes);
  // Pages backed by a memory file whose descriptor (fd(), close-on-exec) can be handed to a program.
  static common::Expected<SharedPages> create_in_memory_file(std::size_t n_bytes);
  // Maps `n_bytes` of the memory file `fd` (from create_in_memory_file, inherited); takes the descriptor.
  static common::Expected<SharedPages> map_memory_file(int fd, std::size_t n_bytes);
  SharedPages(SharedPages&& o) noexcept;
  SharedPages& operator=(SharedPages&& o) noexcept;
  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;
  ~SharedPages();

  // More of a memory file's pages: the process holding the descriptor extends the file first; one
  // without it (which dropped it) maps more of what the holder extended. data() may move.
  common::Fallible grow(std::size_t n_bytes);
  // Closes the memory file's descriptor; the mapping stays.
  void drop_descriptor();

  std::byte* data() const { return data_; }
  std::size_t size() const { return n_bytes_; }
  int fd() const { return fd_; }  // -1 for anonymous pages

 private:
  SharedPages(std::byte* data, std::size_t n_bytes, int fd = -1) : data_(data), n_bytes_(n_bytes), fd_(fd) {}
  void release();
  std::byte* data_ = nullptr;
  std::size_t n_bytes_ = 0;
  int fd_ = -1;
};

// A counter in shared pages that one process sets and another waits for. Lives in SharedPages
// (placement-constructed); lock-free across processes.
struct Doorbell {
  std::atomic<std::uint32_t> value{0};

  // Sets the value and wakes every process waiting on it.
  void ring(std::uint32_t v);

  // Waits until the value equals `want`: spins for `spin`, then sleeps on the futex, waking every
  // `poll` to ask `keep_waiting()` (false ends the wait, e.g. the other process died). Returns
  // true when the value arrived.
  bool wait_for(std::uint32_t want, std::chrono::microseconds spin, std::chrono::milliseconds poll,
                const std::function<bool()>& keep_waiting) const;
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

}  // namespace kernelrl::sandbox
