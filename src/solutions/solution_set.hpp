// Published solution sets, read as their authors publish them, for `kernelrl audit`:
// - CUDA-L1's release: JSON lines (or a JSON list) of objects with level_id, task_id, custom_code
//   (null: no solution for that task) and score_default (the speedup claimed); an optional "name"
//   tells several solutions of one task apart;
// - a JSON object mapping a task's name to its code, or to {"code": ..., "speedup": ...};
// - a folder of ModelNew files named by task (NAME.py), with the claims in its claims.json
//   ({"NAME": speedup}) when there is one.
// Claims may also come from a separate file in the last form (--claims), which wins.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::solutions {

struct Solution {
  std::string name;                       // unique in the set: the entry's name, or "level1_task3"
  std::optional<int> level;               // KernelBench level, when the set says
  std::optional<int> task_id;             // KernelBench task number, when the set says
  std::string code;                       // empty: the set publishes no solution for this task
  std::optional<double> claimed_speedup;  // what the set claims (score_default, speedup)
  std::string origin;                     // where it was read: "FILE:LINE", "FILE[\"key\"]", a path
};

// Every solution of the set at `path` (a file or a folder), in the set's order. An Error names the
// file, the line or key, and the field at fault.
common::Expected<std::vector<Solution>> read_solution_set(const std::filesystem::path& path,
                                                          const std::optional<std::filesystem::path>& claims = {});

// "NAME" with every character outside [A-Za-z0-9_.-] as '_' and no leading '.': a file name.
std::string file_name_for(const std::string& name);

}  // namespace kernelrl::solutions
