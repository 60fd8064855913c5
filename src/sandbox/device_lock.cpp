#include "sandbox/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kernelrl::sandbox {

namespace {

void lock_fd(int fd, int operation) {
  while (::flock(fd, operation) != 0 && errno == EINTR) {
  }
}

}  // namespace

common::Expected<DeviceLock> DeviceLock::open(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto turnstile = (dir / "turnstile.lock").string(), main = (dir / "device.lock").string();
  int t = ::open(turnstile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (t < 0) return common::make_error(turnstile + ": cannot open the device lock: " + std::strerror(errno));
  int m = ::open(main.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (m < 0) {
    ::close(t);
    return common::make_error(main + ": cannot open the device lock: " + std::strerror(errno));
  }
  return DeviceLock(t, m);
}

DeviceLock::DeviceLock(DeviceLock&& other) noexcept
    : turnstile_fd_(std::exchange(other.turnstile_fd_, -1)),
      main_fd_(std::exchange(other.main_fd_, -1)),
      mode_(std::exchange(other.mode_, Mode::NONE)) {}

DeviceLock& DeviceLock::operator=(DeviceLock&& other) noexcept {
  if (this != &other) {
    this->~DeviceLock();
    turnstile_fd_ = std::exchange(other.turnstile_fd_, -1);
    main_fd_ = std::exchange(other.main_fd_, -1);
    mode_ = std::exchange(other.mode_, Mode::NONE);
  }
  return *this;
}

DeviceLock::~DeviceLock() {
  if (turnstile_fd_ >= 0) ::close(turnstile_fd_);
  if (main_fd_ >= 0) ::close(main_fd_);  // closing releases the lock
}

void DeviceLock::acquire(Mode mode) {
  if (mode == mode_ || main_fd_ < 0) return;
  if (mode_ != Mode::NONE) lock_fd(main_fd_, LOCK_UN);
  mode_ = Mode::NONE;
  if (mode == Mode::SHARED) {
    // Pass the turnstile: blocks while an exclusive request is waiting.
    lock_fd(turnstile_fd_, LOCK_EX);
    lock_fd(turnstile_fd_, LOCK_UN);
    lock_fd(main_fd_, LOCK_SH);
  } else if (mode == Mode::EXCLUSIVE) {
    lock_fd(turnstile_fd_, LOCK_EX);  // new shared requests queue behind us
    lock_fd(main_fd_, LOCK_EX);       // the current shared holders finish
    lock_fd(turnstile_fd_, LOCK_UN);
  }
  mode_ = mode;
}

DeviceLock::Mode raised_mode(DeviceLock::Mode wanted, DeviceLock::Mode current) {
  return static_cast<int>(wanted) > static_cast<int>(current) ? wanted : current;
}

}  // namespace kernelrl::sandbox
