#include "train/format_reward.hpp"

#include <array>
#include <regex>

#include "common/fs.hpp"

namespace kernelrl::train {

double format_marker_fraction(const std::string& code) {
  static const std::array<std::regex, 4> markers{
      std::regex(R"(__global__\s+void\s+\w+\s*\()"),
      std::regex(R"(extern\s+"C"[^;{]*kernelrl_forward\s*\()"),
      std::regex(R"(\w+\s*<<<[^>]+>>>\s*\()"),
      std::regex(R"(#include\s*<kernelrl/abi\.h>)"),
  };
  int n = 0;
  for (const auto& m : markers) n += std::regex_search(code, m) ? 1 : 0;
  return n / static_cast<double>(markers.size());
}

common::Expected<eval::EvalResult> FormatRewardEvaluator::evaluate(const eval::EvalJob& job) {
  auto code = common::read_file(job.candidate);
  if (!code) return code.error();
  eval::EvalResult r;
  r.task = job.task.string();
  r.candidate = job.candidate.string();
  r.status = common::Status::OK;
  r.correct = true;  // "well-formed" under this reward: see the header
  r.speedup = format_marker_fraction(*code);
  r.error.message = "format reward: the code was not compiled or run; speedup holds the fraction of format markers present";
  r.isolation["reward"] = "format";
  return r;
}

}  // namespace kernelrl::train
