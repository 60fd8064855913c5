// Times repeated calls the way the evaluation protocol says: warm-up, cache flush before every
// timed call, an end mark that waits for the whole device, enough repetitions for a stable median.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "eval/options.hpp"
#include "eval/result.hpp"

namespace kernelrl::eval {

class CallTimer {
 public:
  // cuda: time with events on `stream` and flush L2 (`l2_bytes`); else host clock and a flush of
  // the CPU's last-level cache. cuda and host_clock (a candidate whose GPU work runs in another
  // process's context): flush L2, then the host clock from the call's start (after `arm`) to the
  // end of an end mark of this context (gpu::EndMark).
  static common::Expected<std::unique_ptr<CallTimer>> create(bool cuda, void* stream, std::int64_t l2_bytes,
                                                             bool host_clock = false);
  virtual ~CallTimer() = default;

  // One call of the timed code; an Error stops timing with its message.
  using Call = std::function<common::Fallible(int rep)>;

  // Calls `call(rep)` n_warmup times untimed, then times calls until max_reps, or min_reps and
  // timing_budget_ms; the first error stops timing. `prepare(rep)`, if given, runs before every
  // call (warm-up ones too) outside the timed region (fresh inputs and poisoned outputs there);
  // `after(rep)`, if given, after every timed call, outside it (an audit of that call); an Error
  // from it stops timing with that error. `arm(rep)`, if given, runs right before the clock starts
  // (after the flush) of every timed call. Returns the per-call times in milliseconds.
  common::Expected<std::vector<double>> run(const Call& call, const EvalOptions& options,
                                            const std::function<void(int rep)>& prepare = {}, const Call& after = {},
                                            const Call& arm = {});

  // Two calls timed alternately (a, b, a, b, ...): warm-up of each, then pairs until max_reps, or
  // min_reps and the two totals together reach twice timing_budget_ms. A drift of the machine
  // (clocks, other processes) then reaches both alike, where two runs one after the other would
  // see different moments. `prepare`, `after` and `arm` as in run(), for `a` only. `b_timer`, when
  // given, times `b` (a reference in this process beside a candidate in another CUDA context).
  struct Paired {
    std::vector<double> a_ms, b_ms;
  };
  common::Expected<Paired> run_paired(const Call& call_a, const Call& call_b, const EvalOptions& options,
                                      const std::function<void(int rep)>& prepare = {}, const Call& after = {},
                                      const Call& arm = {}, CallTimer* b_timer = nullptr);

  // How long the threads doing the timed work waited for a CPU during the timed calls
  // (`wait_clock`: their cumulative wait in nanoseconds, read right before each call's clock
  // starts and right after it stops), beside the calls' total time: a CPU timing on a machine busy
  // with other work measures the machine, and says so (EvalResult::timing_unstable). Without a
  // wait clock (the default, and on a GPU) nothing is read.
  struct CpuWait {
    double wait_ms = 0;
    double timed_ms = 0;
    double fraction() const { return timed_ms > 0 ? wait_ms / timed_ms : 0; }
  };
  void measure_cpu_wait(std::function<common::Expected<std::int64_t>()> wait_clock) { wait_clock_ = std::move(wait_clock); }
  bool measures_cpu_wait() const { return static_cast<bool>(wait_clock_); }
  // Of the calls run() timed and of run_paired()'s `a` calls; of run_paired()'s `b` calls.
  const CpuWait& cpu_wait() const { return wait_a_; }
  const CpuWait& cpu_wait_b() const { return wait_b_; }

  // One call like a timed one (the cache flushed first when options.flush_l2) but not measured,
  // then waited for. Returns the call's error, the device's, or Ok.
  common::Fallible call_untimed(const std::function<common::Fallible()>& call, const EvalOptions& options);

 protected:
  virtual common::Fallible flush() = 0;
  virtual common::Fallible start() = 0;
  virtual common::Expected<double> stop_ms() = 0;
  virtual common::Fallible settle() = 0;  // wait for all work after an untimed call

 private:
  common::Fallible warm_up(const Call& call, const EvalOptions& options, const std::function<void(int rep)>& prepare);
  common::Expected<double> timed(const Call& call, int rep, const EvalOptions& options, const Call& arm,
                                 CpuWait& wait);

  std::function<common::Expected<std::int64_t>()> wait_clock_;
  CpuWait wait_a_, wait_b_;
};

// Summary of per-call milliseconds, in microseconds.
TimingSummary summarize_ms(const std::vector<double>& times_ms);

}  // namespace kernelrl::eval
