// The work queue of a rollout's worker threads: units of (task, trajectory, turns) that running
// units may add to (the next beam round), drained when empty with nothing running, or stopped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace kernelrl::rollout {

// Turns first_turn..last_turn of one trajectory of one task.
struct Unit {
  std::size_t task = 0;  // index into the run's tasks
  int trajectory = 0;
  int first_turn = 1;
  int last_turn = 1;
};

class UnitQueue {
 public:
  void push(Unit unit) {
    std::lock_guard<std::mutex> lock(mutex_);
    units_.push_back(unit);
    changed_.notify_one();
  }

  // The next unit; waits while the queue is empty but units are running (they may add more).
  // None once the queue is empty with nothing running, or after stop(). A unit taken must be
  // given back with done() after any units it adds are pushed.
  std::optional<Unit> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || !units_.empty() || n_running_ == 0; });
    if (stopped_ || units_.empty()) return std::nullopt;
    Unit unit = units_.front();
    units_.pop_front();
    ++n_running_;
    return unit;
  }

  void done() {
    std::lock_guard<std::mutex> lock(mutex_);
    --n_running_;
    changed_.notify_all();
  }

  // Hands out no more units; those running finish.
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Unit> units_;
  int n_running_ = 0;
  bool stopped_ = false;
};

}  // namespace kernelrl::rollout
