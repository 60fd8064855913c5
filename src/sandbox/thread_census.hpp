// How many threads another process has, read from /proc, and whether the thread that started it is
// still alive. The evaluating child uses it on a host candidate's runner (eval/host_runner.hpp):
// between calls the runner must be back to its one thread, so no thread of the candidate's works
// before the clock starts, answers the protocol in the runner's place, finishes a call after it
// returned or burns CPU beside the reference. Threads a call starts and joins are fine.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

#include "common/expected.hpp"

namespace kernelrl::sandbox {

struct ThreadCensus {
  int n_threads = 0;          // the kernel's count for the whole process
  bool leader_alive = false;  // the first thread has not exited (a process can live on without it)
  // The first thread is on a CPU or waiting for one ('R'): the kernel's count of its CPU time lags
  // behind until it sleeps, so a reading of the process's CPU clock now may be short.
  bool leader_running = false;
};

// Reads /proc/<pid>/status. An Error names the file when it cannot be read (the process is gone).
common::Expected<ThreadCensus> thread_census(pid_t pid);

// One thread's scheduler statistics (/proc/<pid>/task/<tid>/schedstat): nanoseconds on a CPU, and
// nanoseconds waited for one while runnable. The kernel adds a running thread's time when it stops.
struct SchedStat {
  std::int64_t on_cpu_ns = 0;
  std::int64_t waited_ns = 0;
};
common::Expected<SchedStat> thread_schedstat(pid_t pid, pid_t tid);

// How long the threads of `pid` have waited for a CPU while runnable, in nanoseconds, summed over
// the threads alive now (/proc/<pid>/task/*/schedstat, second field; a thread that already exited
// takes its share with it). The difference of two readings around a timed call says how much of
// the call the machine's other work took: on an idle machine a few microseconds of wake-ups.
common::Expected<std::int64_t> cpu_wait_ns(pid_t pid);
// The same of one thread `tid` of `pid` (/proc/<pid>/task/<tid>/schedstat).
common::Expected<std::int64_t> thread_cpu_wait_ns(pid_t pid, pid_t tid);

// Whether a thread this process wakes now would find a CPU free: fewer runnable threads on the
// whole machine (/proc/loadavg, this one counted) than CPUs this process may use.
bool idle_cpu_available();

// The census once `pid` is down to `expected` threads (its first thread alone by default; a GPU
// candidate's process also keeps the CUDA driver's), or the last one read when `grace` ran out
// first: a thread that a call joined leaves the kernel's count some microseconds after the join.
common::Expected<ThreadCensus> census_after_joins(pid_t pid, std::chrono::microseconds grace, int expected = 1);

}  // namespace kernelrl::sandbox
