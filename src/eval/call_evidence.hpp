// What a candidate's calls ran, tallied from the records its process keeps below Python of every
// call (audit/call_recorder.hpp: the PyTorch operators dispatched and, on a GPU, the kernels
// launched, with the kernels the candidate's own libraries define told apart before any of its code
// ran). Kept whatever the rules refuse, so a solution measured under the observe rules says how many
// of its calls ran a kernel of its own and how many ran PyTorch's compute instead (a fallback, or
// PyTorch doing part of the work). In a record: isolation.candidate_process.calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelrl::eval {

class CallEvidence {
 public:
  // One call's record as the runner gave it ({"ops": {...}, "launches": {...}}; anything else counts
  // as a call without a readable record).
  void add(const nlohmann::json& record);

  // {"calls", "records", then where every record has an operator record (kernelbench)
  // "ops_intact", "with_refused_ops", "refused_ops", and where every record has a launch record (a
  // GPU) "launches_intact", "with_own_kernels", "without_own_kernels", "with_foreign_kernels",
  // "foreign_kernels"}. Name lists hold each name once, the first 8.
  nlohmann::json to_json() const;

  // Whether any call gave a record (a host candidate's runner records nothing).
  bool any_record() const { return n_records_ > 0; }

 private:
  std::int64_t n_calls_ = 0, n_records_ = 0;
  std::int64_t n_op_records_ = 0, n_with_refused_ops_ = 0;
  std::int64_t n_launch_records_ = 0, n_with_own_kernels_ = 0, n_with_foreign_kernels_ = 0;
  bool ops_intact_ = true, launches_intact_ = true;
  std::vector<std::string> refused_ops_, foreign_kernels_;
};

}  // namespace kernelrl::eval
