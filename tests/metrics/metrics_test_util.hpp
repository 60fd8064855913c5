// Shared by the metrics tests: the hand-made trajectories file and scratch files of a test's own.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/subprocess.hpp"

namespace kernelrl::metrics::testing {

// 3 tasks x 4 trajectories x 2 turns, turn-2 records first, one update record, a truncated last line.
inline std::filesystem::path data_file() {
  return std::filesystem::path(KERNELRL_SOURCE_DIR) / "tests/metrics/data/trajectories.jsonl";
}

// A fresh folder for the running test, removed and recreated on each call.
inline std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::temp_directory_path() /
             ("kernelrl-metrics-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// One full turn record as a JSON line (no newline).
inline std::string turn_line(const std::string& task, int trajectory, int turn, bool correct, const std::string& speedup) {
  return R"({"task": ")" + task + R"(", "trajectory": )" + std::to_string(trajectory) + R"(, "turn": )" +
         std::to_string(turn) + R"(, "correct": )" + (correct ? "true" : "false") + R"(, "speedup": )" + speedup + "}";
}

// A stand-in Chart.js in `dir`, so the CLI tests do not depend on the Debian package.
inline std::filesystem::path fake_chart_js(const std::filesystem::path& dir) {
  return write_file(dir / "chart.min.js", "/* stand-in Chart.js */ window.Chart = function () {};");
}

// `kernelrl report ARGS...` run from the source folder.
struct CliRun {
  int code;
  std::string output;  // stdout and stderr interleaved
};

inline CliRun kernelrl_report(std::vector<std::string> args) {
  args.insert(args.begin(), {KERNELRL_BINARY, "report"});
  auto r = common::run_process(args, KERNELRL_SOURCE_DIR);
  EXPECT_TRUE(r) << r.error().message;
  return r ? CliRun{r->exit_code, r->output} : CliRun{-1, ""};
}

}  // namespace kernelrl::metrics::testing
