// Shared by the rollout tests: a scratch folder per test, reading a run's JSON lines, and the
// scripted answers built from the host ladder's candidates.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelrl::rollout::testing {

inline std::string source_path(const std::string& relative) { return std::string(KERNELRL_SOURCE_DIR) + "/" + relative; }

// The running test's own folder under the temporary directory.
inline std::filesystem::path scratch_path() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::filesystem::temp_directory_path() /
         ("kernelrl-rollout-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "." + info->name());
}

// A fresh scratch_path(), removed and recreated on each call.
inline std::filesystem::path scratch_dir() {
  auto dir = scratch_path();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Every line of a JSON-lines file, parsed (a line that does not parse fails the test).
inline std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << path << ": " << line.substr(0, 200);
    lines.push_back(j);
  }
  return lines;
}

// A model answer: the host candidate `relative` in a ```cpp block, then a summary.
inline std::string host_answer(const std::string& relative, const std::string& summary) {
  return "<think>rows are independent</think>\n```cpp\n" + read_text(source_path(relative)) + "```\n" + summary;
}

inline const std::string kTask = "tests/ladder/task_softmax_small.py";
inline const std::string kCorrect = "tests/ladder/host/correct.cpp";
inline const std::string kOffByOne = "tests/ladder/host/off_by_one.cpp";

}  // namespace kernelrl::rollout::testing
