// Runs an external program (a compiler) with a wall-time limit, resource limits and captured,
// capped output. Thread-safe: each call forks its own child; safe to call from pool threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::common {

struct RunLimits {
  std::chrono::milliseconds wall_time{60000};  // killed (whole process group) past this
  std::uint64_t address_space_bytes = 0;        // RLIMIT_AS per process; 0 = unlimited
  std::uint64_t file_size_bytes = 0;            // RLIMIT_FSIZE: largest file it may write; 0 = unlimited
  std::size_t max_output_bytes = 1 << 20;       // stdout+stderr kept; the rest is dropped
  int nice = 0;                                 // added to the niceness: > 0 yields the CPU to others
  bool own_process_group = true;  // false: stays in the caller's group, so whoever kills that group (a
                                  // time limit around the caller) kills it too; the time limit kills it alone
};

struct RunResult {
  int exit_code = -1;      // valid when !timed_out && term_signal == 0
  int term_signal = 0;     // signal that ended it, 0 if it exited
  bool timed_out = false;
  std::string output;      // stdout and stderr interleaved, capped at max_output_bytes
  double wall_ms = 0;
  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// Runs argv[0] (looked up on PATH) in `cwd` with extra `env` entries ("NAME=value") added to the
// current environment. Fails only if the program cannot be started at all.
Expected<RunResult> run_process(const std::vector<std::string>& argv,
                                const std::filesystem::path& cwd = {},
                                const std::vector<std::string>& env = {},
                                const RunLimits& limits = {});

}  // namespace kernelrl::common
