#include "sandbox/shared_pages.hpp"

#include <errno.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

namespace kernelrl::sandbox {

common::Expected<SharedPages> SharedPages::create(std::size_t n_bytes) {
  void* p = ::mmap(nullptr, n_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return common::make_error("cannot map " + std::to_string(n_bytes) + " bytes of shared memory: " + std::strerror(errno));
  }
  return SharedPages(static_cast<std::byte*>(p), n_bytes);
}

common::Expected<SharedPages> SharedPages::create_in_memory_file(std::size_t n_bytes) {
  const int fd = ::memfd_create("kernelrl-call", MFD_CLOEXEC);
  if (fd < 0) return common::make_error(std::string("cannot create a memory file: ") + std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(n_bytes)) != 0) {
    const int e = errno;
    ::close(fd);
    return common::make_error("cannot size a memory file to " + std::to_string(n_bytes) + " bytes: " + std::strerror(e));
  }
  return map_memory_file(fd, n_bytes);
}

common::Expected<SharedPages> SharedPages::map_memory_file(int fd, std::size_t n_bytes) {
  void* p = ::mmap(nullptr, n_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    return common::make_error("cannot map " + std::to_string(n_bytes) + " bytes of memory file descriptor " +
                              std::to_string(fd) + ": " + std::strerror(e));
  }
  return SharedPages(static_cast<std::byte*>(p), n_bytes, fd);
}

SharedPages::SharedPages(SharedPages&& o) noexcept : data_(o.data_), n_bytes_(o.n_bytes_), fd_(o.fd_) {
  o.data_ = nullptr;
  o.n_bytes_ = 0;
  o.fd_ = -1;
}

SharedPages& SharedPages::operator=(SharedPages&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    n_bytes_ = o.n_bytes_;
    fd_ = o.fd_;
    o.data_ = nullptr;
    o.n_bytes_ = 0;
    o.fd_ = -1;
  }
  return *this;
}

common::Fallible SharedPages::grow(std::size_t n_bytes) {
  if (n_bytes <= n_bytes_) return common::Ok{};
  if (fd_ >= 0 && ::ftruncate(fd_, static_cast<off_t>(n_bytes)) != 0) {
    return common::make_error("cannot size a memory file to " + std::to_string(n_bytes) + " bytes: " + std::strerror(errno));
  }
  void* p = ::mremap(data_, n_bytes_, n_bytes, MREMAP_MAYMOVE);
  if (p == MAP_FAILED) {
    return common::make_error("cannot map " + std::to_string(n_bytes) + " bytes of shared pages: " + std::strerror(errno));
  }
  data_ = static_cast<std::byte*>(p);
  n_bytes_ = n_bytes;
  return common::Ok{};
}

void SharedPages::drop_descriptor() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void SharedPages::release() {
  if (data_) ::munmap(data_, n_bytes_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

SharedPages::~SharedPages() { release(); }

namespace {

// The futex word of a std::atomic<uint32_t> (same size and representation; shared, not private,
// because the waiters are in different processes).
std::uint32_t* word(const std::atomic<std::uint32_t>& a) {
  return reinterpret_cast<std::uint32_t*>(const_cast<std::atomic<std::uint32_t>*>(&a));
}

}  // namespace

void Doorbell::ring(std::uint32_t v) {
  value.store(v, std::memory_order_release);
  ::syscall(SYS_futex, word(value), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

bool Doorbell::wait_for(std::uint32_t want, std::chrono::microseconds spin, std::chrono::milliseconds poll,
                        const std::function<bool()>& keep_waiting) const {
  using clock = std::chrono::steady_clock;
  const auto spin_until = clock::now() + spin;
  while (clock::now() < spin_until) {
    for (int i = 0; i < 64; ++i) {
      if (value.load(std::memory_order_acquire) == want) return true;
      // No pause instruction: under a hypervisor a long pause loop exits to the host, which may
      // run something else on this CPU and so add tens of microseconds to the wake-up.
      asm volatile("" ::: "memory");
    }
  }
  const timespec timeout{static_cast<time_t>(poll.count() / 1000), static_cast<long>(poll.count() % 1000) * 1000000L};
  for (;;) {
    const std::uint32_t seen = value.load(std::memory_order_acquire);
    if (seen == want) return true;
    // Sleeps only while the value is still `seen`: a ring between the load and the call returns at once.
    ::syscall(SYS_futex, word(value), FUTEX_WAIT, seen, &timeout, nullptr, 0);
    if (value.load(std::memory_order_acquire) == want) return true;
    if (keep_waiting && !keep_waiting()) return false;
  }
}

}  // namespace kernelrl::sandbox
