// Which task file a published solution is for. KernelBench names its tasks
// levelL/N_Name.py; kernelrl's task folders levelL/NNN_name.py. A solution is matched by its
// level and task number when its set gives them (CUDA-L1), else by name: a task file's stem or
// path below the folder (without .py), else its leading number when exactly one task has it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "solutions/solution_set.hpp"

namespace kernelrl::solutions {

class TaskIndex {
 public:
  // Every .py file below `dir` (an Error when it is not a folder or holds none).
  static common::Expected<TaskIndex> scan(const std::filesystem::path& dir);

  // The task file of `s`, or an Error saying why none (no task with that number or name, or several).
  common::Expected<std::filesystem::path> find(const Solution& s) const;

  std::size_t size() const { return files_.size(); }

 private:
  struct Entry {
    std::filesystem::path path;
    std::string relative;        // below the folder, without .py ("level1/003_softmax")
    std::optional<int> level;    // from a folder named levelL on its path
    std::optional<int> number;   // the stem's leading digits
  };
  std::filesystem::path dir_;
  std::vector<Entry> files_;
  common::Expected<std::filesystem::path> only(const std::vector<const Entry*>& hits, const std::string& what) const;
};

}  // namespace kernelrl::solutions
