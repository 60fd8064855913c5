#include "sandbox/thread_census.hpp"

#include <cstdlib>
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
