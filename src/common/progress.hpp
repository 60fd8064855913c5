// A one-line progress bar on stderr for long runs (evaluating a task set, a rollout batch):
//   eval [#########-----------] 12/50  24%  ok 9  ETA 0:41  note
// redrawn in place at most ~10 times a second; silent when stderr is not a terminal so logs and
// CI output stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace kernelrl::common {

// What one frame of the bar shows. Pure data so the layout can be tested without a terminal.
struct ProgressSnapshot {
  std::string_view label;   // first word, e.g. "eval"
  std::int64_t n_done = 0;  // units finished so far
  std::int64_t total = 0;   // units expected; <= 0 means unknown (no bar, percent or ETA)
  double elapsed_s = 0;     // seconds since the bar started
  std::string_view suffix;  // caller's status, e.g. "ok 9"
  std::string_view note;    // last advance()'s note, e.g. the task name
  bool finished = false;    // show the total time instead of an ETA
};

// One frame without control characters, cut to `max_width` code points.
std::string render_progress_line(const ProgressSnapshot& snapshot, std::size_t max_width);

// "0:41", "12:05", "1:02:03"; negative or non-finite durations give "--:--".
std::string format_duration(double seconds);

// Whether stderr is a terminal; pass it as ProgressBar's `enabled`.
bool stderr_is_tty();

class ProgressBar {
 public:
  // Draws the empty bar at once when enabled. `sink` is for tests; it is not closed.
  ProgressBar(std::string label, std::int64_t total, bool enabled, std::FILE* sink = stderr);
  ~ProgressBar();  // finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Counts `n` more units done and remembers `note` (if non-empty). Thread-safe; redraws at most
  // every 100 ms, and always when the count reaches the total.
  void advance(std::int64_t n = 1, std::string_view note = {});

  // Replaces the status text after the percentage (e.g. "ok 9  fail 3"). Thread-safe; shown at the
  // next redraw.
  void set_suffix(std::string suffix);

  // Prints `line` above the bar (or plainly when disabled) so logs and the bar do not interleave.
  // Thread-safe.
  void log(std::string_view line);

  // Draws the final frame with the total time and ends the line. Idempotent, thread-safe.
  void finish();

 private:
  void draw_locked(bool force);

  std::mutex mu_;
  const std::string label_;
  const std::int64_t total_;
  const bool enabled_;
  std::FILE* const sink_;
  std::int64_t n_done_ = 0;
  std::string suffix_;
  std::string note_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace kernelrl::common
