// Shared set-up for engine tests: one Engine per test binary (the worker imports torch once),
// short phase limits so hang tests stay quick, a private compile cache.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "eval/engine.hpp"

namespace kernelrl::eval::testing {

inline std::string source_path(const std::string& relative) { return std::string(KERNELRL_SOURCE_DIR) + "/" + relative; }

// Indexes of the entries of a batch file marked "known_gap": true: hacks the engine does not catch
// yet, listed with the status they get today (tests/adversarial/README.md) but not run by tests.
inline std::set<std::size_t> known_gap_entries(const std::string& batch_file) {
  std::set<std::size_t> gaps;
  auto text = common::read_file(source_path(batch_file));
  EXPECT_TRUE(text) << batch_file;
  if (!text) return gaps;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_array()) return gaps;  // JSON lines: no known gaps there
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (j[i].is_object() && j[i].value("known_gap", false)) gaps.insert(i);
  }
  return gaps;
}

inline std::filesystem::path test_cache_dir() {
  return std::filesystem::temp_directory_path() / ("kernelrl-test-cache-" + std::to_string(::getpid()));
}

// The engine tests' compile cache: inside test_cache_dir(), or $KERNELRL_TEST_COMPILE_CACHE when set
// (scripts/gpu-check.sh shares one with its batch runs, which then reuse the builds the tests made).
inline std::filesystem::path test_compile_cache() {
  const char* shared = std::getenv("KERNELRL_TEST_COMPILE_CACHE");
  return shared && *shared ? std::filesystem::path(shared) : test_cache_dir();
}

inline EngineConfig test_config(const std::string& device) {
  EngineConfig c;
  c.worker_binary = KERNELRL_BINARY;
  c.cache_dir = test_compile_cache();
  c.options.device = device;
  c.options.timeout_correctness_s = 4;
  c.options.timeout_timing_s = 20;
  c.options.min_reps = 5;
  c.options.max_reps = 20;
  c.options.n_warmup = 2;
  c.options.timing_budget_ms = 200;
  return c;
}

}  // namespace kernelrl::eval::testing
