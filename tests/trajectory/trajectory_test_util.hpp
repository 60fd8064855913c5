// Shared by the trajectory tests: a scratch folder per test, files written and read whole, and
// small hand-made record lines.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kernelrl::trajectory::testing {

inline std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(KERNELRL_SOURCE_DIR) / relative;
}

// The report's hand-made run: 3 tasks x 4 trajectories x 2 turns, turn-2 records first, one
// update record, a truncated last line.
inline std::filesystem::path data_file() { return source_path("tests/metrics/data/trajectories.jsonl"); }

// A fresh folder for the running test, removed and recreated on each call.
inline std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::temp_directory_path() /
             ("kernelrl-trajectory-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::filesystem::path write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  return path;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One full turn record as a JSON line (no newline): the fields every version wrote, no more.
inline std::string turn_line(const std::string& task, int trajectory, int turn, bool correct, const std::string& speedup) {
  return R"({"task": ")" + task + R"(", "trajectory": )" + std::to_string(trajectory) + R"(, "turn": )" +
         std::to_string(turn) + R"(, "correct": )" + (correct ? "true" : "false") + R"(, "speedup": )" + speedup + "}";
}

}  // namespace kernelrl::trajectory::testing
