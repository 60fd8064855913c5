// CPU time a candidate's runner spent between answering the evaluator and its next request, window
// by window, and the rule that judges it: work there escapes the child's timer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kernelrl::eval {

struct OutsideLimits {
  const char* who;                 // whose CPU time, for the message ("process's first thread")
  std::int64_t window_ns;          // a window above this is long
  std::int64_t budget_ns;          // all windows together, plus per_window_ns each; 0: no total limit
  std::int64_t per_window_ns;
};

// The runner's loop (its first thread) rings an answer and sleeps on the doorbell: a few
// microseconds a window. Its whole process gets more room in a window: threads a call joined finish
// exiting after the join, hundreds of microseconds with many threads.
inline constexpr OutsideLimits kLoopOutside{"process's first thread", 200'000, 2'000'000, 20'000};
inline constexpr OutsideLimits kProcessOutside{"process", 10'000'000, 0, 0};

// Long windows are allowed up to kLongWindowsAllowed, or 1 in kLongWindowsPer where there are more:
// a few are noise the kernel charges to whatever thread is current (a hypervisor's stolen time,
// interrupts: one loop window of 931 us in 2,000 jobs on a loaded 2-core VM), and the score is a
// median of timed calls that a few cannot move. Work on many calls shows in the number of long
// windows and, spread thin, in the total.
class OutsideWindows {
 public:
  static constexpr std::int64_t kLongWindowsAllowed = 2;
  static constexpr std::int64_t kLongWindowsPer = 20;

  explicit OutsideWindows(OutsideLimits limits) : limits_(limits) {}

  void add(std::int64_t ns);
  std::int64_t long_windows_allowed() const;
  std::int64_t budget_ns() const { return limits_.budget_ns + n_ * limits_.per_window_ns; }
  // Why these windows are refused, or nullopt.
  std::optional<std::string> refusal() const;
  // Keys prefixed with `prefix` ("loop_cpu", "process_cpu").
  nlohmann::json record(const std::string& prefix) const;

 private:
  OutsideLimits limits_;
  std::int64_t max_ns_ = 0, total_ns_ = 0, n_ = 0, n_long_ = 0;
};

}  // namespace kernelrl::eval
