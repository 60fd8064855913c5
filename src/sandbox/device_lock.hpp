// Shared or exclusive use of the device by the evaluations of several worker processes: children
// share it while their kernels are checked and hold it alone while timed, so no other
// evaluation's kernels run meanwhile (which phase needs which mode: eval/phases.hpp). Held by the workers on behalf of their children
// (never by candidate code), through flock(2) on two files of one folder. Writers go first: an
// exclusive request waits holding a turnstile that every new shared request must pass.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

class DeviceLock {
 public:
  enum class Mode { NONE, SHARED, EXCLUSIVE };  // in this order: raised_mode compares them

  // Opens (creating when needed) the lock files in `dir`; all workers of one engine use the same dir.
  static common::Expected<DeviceLock> open(const std::filesystem::path& dir);
  DeviceLock(DeviceLock&& other) noexcept;
  DeviceLock& operator=(DeviceLock&& other) noexcept;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  ~DeviceLock();

  // Blocks until the lock is held in `mode` (NONE releases). Changing mode releases first.
  void acquire(Mode mode);
  Mode mode() const { return mode_; }

 private:
  DeviceLock(int turnstile_fd, int main_fd) : turnstile_fd_(turnstile_fd), main_fd_(main_fd) {}
  int turnstile_fd_ = -1;
  int main_fd_ = -1;
  Mode mode_ = Mode::NONE;
};

// The mode to hold when a child's next phase wants `wanted` while `current` is held: modes only
// go up (NONE < SHARED < EXCLUSIVE), so once exclusive the child keeps it until it ends, whatever
// phases it announces after.
DeviceLock::Mode raised_mode(DeviceLock::Mode wanted, DeviceLock::Mode current);

}  // namespace kernelrl::sandbox
