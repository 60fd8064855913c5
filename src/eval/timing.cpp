#include "eval/timing.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "eval/gpu.hpp"
#include "eval/stats.hpp"

namespace kernelrl::eval {

namespace {

class GpuTimer : public CallTimer {
 public:
  explicit GpuTimer(void* stream) : stream_(stream) {}
  common::Fallible init(std::int64_t l2_bytes) {
    if (auto s = flusher_.init(l2_bytes); !s) return s;
    return timer_.init();
  }

 protected:
  common::Fallible flush() override { return flusher_.flush(stream_); }
  common::Fallible start() override { return timer_.start(stream_); }
  common::Expected<double> stop_ms() override { return timer_.stop_ms(); }
  common::Fallible settle() override { return gpu::synchronize_and_check(); }

 private:
  void* stream_;
  gpu::L2Flusher flusher_;
  gpu::EventTimer timer_;
};

// For work in another process's CUDA context: events of this context around it would time the
// GPU's switch between the two contexts (~0.3 ms on an H200 without MPS: docs/security.md). This
// context's flush is waited for before the clock starts (the other process's call begins with a
// flush of its own, enqueued, which its launches queue behind); the clock stops when this context's
// end mark (gpu::EndMark) has run, which the GPU does only after the other context's work (or its
// time slice) is over: the other process's answer alone never stops the clock. The idle calls
// subtracted from every call have both switches too.
class GpuHostClockTimer : public CallTimer {
 public:
  explicit GpuHostClockTimer(void* stream) : stream_(stream) {}
  common::Fallible init(std::int64_t l2_bytes) {
    if (auto s = flusher_.init(l2_bytes); !s) return s;
    return end_mark_.init();
  }

 protected:
  common::Fallible flush() override {
    if (auto s = flusher_.flush(stream_); !s) return s;
    return gpu::synchronize_and_check();
  }
  common::Fallible start() override {
    t0_ = std::chrono::steady_clock::now();
    return common::Ok{};
  }
  common::Expected<double> stop_ms() override {
    if (auto s = end_mark_.mark_and_wait(stream_); !s) return s.error();
    const auto t1 = std::chrono::steady_clock::now();
    if (auto s = gpu::synchronize_and_check(); !s) return s.error();
    return std::chrono::duration<double, std::milli>(t1 - t0_).count();
  }
  common::Fallible settle() override { return gpu::synchronize_and_check(); }

 private:
  void* stream_;
  gpu::L2Flusher flusher_;
  gpu::EndMark end_mark_;
  std::chrono::steady_clock::time_point t0_;
};

class CpuTimer : public CallTimer {
 public:
  CpuTimer() {
    // Twice the last-level cache, at most 64 MB: a server's LLC (hundreds of MB) is shared by
    // many cores, and a bigger sweep per timed call only slows CPU evaluations down.
    long llc = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = 32l << 20;
    buffer_.assign(static_cast<std::size_t>(std::min(2 * llc, 64l << 20)), 0);
  }

 protected:
  common::Fallible flush() override {
    for (std::size_t i = 0; i < buffer_.size(); i += 64) buffer_[i] = static_cast<char>(buffer_[i] + 1);
    sink_ = buffer_[buffer_.size() / 2];
    return common::Ok{};
  }
  common::Fallible start() override {
    t0_ = std::chrono::steady_clock::now();
    return common::Ok{};
  }
  common::Expected<double> stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
  }
  common::Fallible settle() override { return common::Ok{}; }

 private:
  std::vector<char> buffer_;
  volatile char sink_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

common::Expected<std::unique_ptr<CallTimer>> CallTimer::create(bool cuda, void* stream, std::int64_t l2_bytes,
                                                               bool host_clock) {
  if (!cuda) return std::unique_ptr<CallTimer>(std::make_unique<CpuTimer>());
  if (host_clock) {
    auto t = std::make_unique<GpuHostClockTimer>(stream);
    if (auto s = t->init(l2_bytes); !s) return s.error();
    return std::unique_ptr<CallTimer>(std::move(t));
  }
  auto t = std::make_unique<GpuTimer>(stream);
  if (auto s = t->init(l2_bytes); !s) return s.error();
  return std::unique_ptr<CallTimer>(std::move(t));
}

common::Fallible CallTimer::warm_up(const Call& call, const EvalOptions& options, const std::function<void(int)>& prepare) {
  for (int i = 0; i < options.n_warmup; ++i) {
    if (prepare) prepare(i);
    if (auto called = call(i); !called) return called;
    if (auto s = settle(); !s) return s.error();
  }
  return common::Ok{};
}

common::Expected<double> CallTimer::timed(const Call& call, int rep, const EvalOptions& options, const Call& arm,
                                          CpuWait& wait) {
  if (options.flush_l2) {
    if (auto s = flush(); !s) return s.error();
  }
  if (arm) {
    if (auto armed = arm(rep); !armed) return armed.error();
  }
  common::Expected<std::int64_t> waited_before = std::int64_t{0};
  if (wait_clock_) waited_before = wait_clock_();
  if (auto s = start(); !s) return s.error();
  if (auto called = call(rep); !called) return called.error();
  auto ms = stop_ms();
  if (ms && wait_clock_ && waited_before) {
    // A thread that exits during the call takes its wait along, so a difference may be negative.
    if (auto waited_after = wait_clock_()) wait.wait_ms += std::max<std::int64_t>(0, *waited_after - *waited_before) / 1e6;
    wait.timed_ms += *ms;
  }
  return ms;
}

common::Expected<std::vector<double>> CallTimer::run(const Call& call, const EvalOptions& options,
                                                     const std::function<void(int)>& prepare, const Call& after,
                                                     const Call& arm) {
  if (auto s = warm_up(call, options, prepare); !s) return s.error();
  std::vector<double> times_ms;
  double total_ms = 0;
  for (int rep = 0; rep < options.max_reps; ++rep) {
    if (rep >= options.min_reps && total_ms >= options.timing_budget_ms) break;
    if (prepare) prepare(rep);
    auto ms = timed(call, rep, options, arm, wait_a_);
    if (!ms) return ms.error();
    times_ms.push_back(*ms);
    total_ms += *ms;
    if (after) {
      if (auto audited = after(rep); !audited) return audited.error();
    }
  }
  return times_ms;
}

common::Expected<CallTimer::Paired> CallTimer::run_paired(const Call& call_a, const Call& call_b,
                                                          const EvalOptions& options,
                                                          const std::function<void(int)>& prepare, const Call& after,
                                                          const Call& arm, CallTimer* b_timer) {
  CallTimer& timer_b = b_timer ? *b_timer : *this;
  if (auto s = warm_up(call_a, options, prepare); !s) return s.error();
  if (auto s = timer_b.warm_up(call_b, options, {}); !s) return s.error();
  Paired times;
  double total_ms = 0;
  for (int rep = 0; rep < options.max_reps; ++rep) {
    if (rep >= options.min_reps && total_ms >= 2 * options.timing_budget_ms) break;
    if (prepare) prepare(rep);
    auto a = timed(call_a, rep, options, arm, wait_a_);
    if (!a) return a.error();
    if (after) {
      if (auto audited = after(rep); !audited) return audited.error();
    }
    auto b = timer_b.timed(call_b, rep, options, {}, b_timer ? timer_b.wait_a_ : wait_b_);
    if (!b) return b.error();
    times.a_ms.push_back(*a);
    times.b_ms.push_back(*b);
    total_ms += *a + *b;
  }
  return times;
}

common::Fallible CallTimer::call_untimed(const std::function<common::Fallible()>& call, const EvalOptions& options) {
  if (options.flush_l2) {
    if (auto s = flush(); !s) return s;
  }
  if (auto called = call(); !called) return called;
  return settle();
}

TimingSummary summarize_ms(const std::vector<double>& times_ms) {
  std::vector<double> us;
  for (double t : times_ms) us.push_back(t * 1000.0);
  SampleStats s = summarize(us);
  TimingSummary t;
  t.n = s.n;
  t.median_us = s.median;
  t.mean_us = s.mean;
  t.min_us = s.min;
  t.max_us = s.max;
  t.stdev_us = s.stdev;
  t.p10_us = s.p10;
  t.p90_us = s.p90;
  return t;
}

}  // namespace kernelrl::eval
