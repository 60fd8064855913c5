#include "sandbox/thread_census.hpp"

#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace kernelrl::sandbox {

common::Expected<ThreadCensus> thread_census(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  std::ifstream status(path);
  if (!status) return common::make_error(path + ": cannot read the process's status");
  ThreadCensus census;
  bool have_threads = false;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("State:", 0) == 0) {
      // "State:\tZ (zombie)": the first thread exited; the status line is that thread's.
      const auto letter = line.find_first_not_of(" \t", 6);
      census.leader_alive = letter != std::string::npos && line[letter] != 'Z' && line[letter] != 'X';
      census.leader_running = letter != std::string::npos && line[letter] == 'R';
    } else if (line.rfind("Threads:", 0) == 0) {
      census.n_threads = std::atoi(line.c_str() + 8);
      have_threads = true;
    }
  }
  if (!have_threads) return common::make_error(path + ": no Threads: line");
  return census;
}

common::Expected<SchedStat> thread_schedstat(pid_t pid, pid_t tid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/schedstat";
  std::ifstream stat(path);
  long long on_cpu = 0, waited = 0;
  if (!(stat >> on_cpu >> waited)) return common::make_error(path + ": cannot read the thread's scheduler statistics");
  return SchedStat{on_cpu, waited};
}

common::Expected<std::int64_t> cpu_wait_ns(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  std::int64_t total = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    const pid_t tid = std::atoi(task.path().filename().c_str());
    if (auto stat = thread_schedstat(pid, tid)) {  // a thread that exited since the listing is skipped
      total += stat->waited_ns;
      any = true;
    }
  }
  if (ec || !any) return common::make_error(tasks + ": cannot read the threads' scheduler statistics");
  return total;
}

common::Expected<std::int64_t> thread_cpu_wait_ns(pid_t pid, pid_t tid) {
  auto stat = thread_schedstat(pid, tid);
  if (!stat) return stat.error();
  return stat->waited_ns;
}

bool idle_cpu_available() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int n_cpus = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  std::ifstream loadavg("/proc/loadavg");  // "0.52 0.58 0.59 3/412 12345": 3 runnable now
  double avg1 = 0, avg5 = 0, avg15 = 0;
  int runnable = 0;
  if (!(loadavg >> avg1 >> avg5 >> avg15 >> runnable)) return true;  // unknown: as on an idle machine
  return runnable < n_cpus;
}

common::Expected<ThreadCensus> census_after_joins(pid_t pid, std::chrono::microseconds grace, int expected) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    auto census = thread_census(pid);
    if (!census || (census->n_threads <= expected && census->leader_alive) || !census->leader_alive ||
        std::chrono::steady_clock::now() >= deadline) {
      return census;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace kernelrl::sandbox
