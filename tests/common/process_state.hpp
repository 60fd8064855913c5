// Test helper: a process as /proc/PID/stat shows it, for tests that check what a run left behind
// (a zombie, ended but not yet reaped, counts as gone).
#pragma once

#include <sys/types.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace kernelrl::testing {

struct ProcessState {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string comm;    // the program's name
  char state = '?';    // R, S, D, Z, ...
  long cpu_ticks = 0;  // user + system, in clock ticks
};

// Nothing when there is no such process (or its line cannot be read).
inline std::optional<ProcessState> read_process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const auto open = line.find('('), close = line.rfind(')');  // the name may hold spaces, parentheses
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessState p;
  p.pid = pid;
  p.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  long skip = 0, utime = 0, stime = 0;
  rest >> p.state >> p.ppid;
  for (int field = 5; field <= 13; ++field) rest >> skip;
  rest >> utime >> stime;
  if (!rest) return std::nullopt;
  p.cpu_ticks = utime + stime;
  return p;
}

// Running or sleeping: false for a process that is gone, a zombie included.
inline bool process_running(pid_t pid) {
  const auto p = read_process_state(pid);
  return p && p->state != 'Z' && p->state != 'X';
}

}  // namespace kernelrl::testing
