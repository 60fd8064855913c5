#include "eval/outside_windows.hpp"

#include <algorithm>

namespace kernelrl::eval {

void OutsideWindows::add(std::int64_t ns) {
  ns = std::max<std::int64_t>(ns, 0);
  max_ns_ = std::max(max_ns_, ns);
  total_ns_ += ns;
  n_long_ += ns > limits_.window_ns ? 1 : 0;
  ++n_;
}

std::int64_t OutsideWindows::long_windows_allowed() const {
  return std::max(kLongWindowsAllowed, n_ / kLongWindowsPer);
}

std::optional<std::string> OutsideWindows::refusal() const {
  const std::string who = std::string("the candidate's ") + limits_.who + " used ";
  const std::string why = ": work outside the calls escapes the timer";
  if (n_long_ > long_windows_allowed()) {
    return who + "more than " + std::to_string(limits_.window_ns / 1000) + " us of CPU time in " +
           std::to_string(n_long_) + " of " + std::to_string(n_) + " windows between requests of the evaluator (at most " +
           std::to_string(long_windows_allowed()) + " such windows; the longest " + std::to_string(max_ns_ / 1000) +
           " us)" + why;
  }
  if (limits_.budget_ns > 0 && total_ns_ > budget_ns()) {
    return who + std::to_string(total_ns_ / 1000) + " us of CPU time in all between " + std::to_string(n_) +
           " requests of the evaluator (at most " + std::to_string(budget_ns() / 1000) + " us)" + why;
  }
  return std::nullopt;
}

nlohmann::json OutsideWindows::record(const std::string& prefix) const {
  nlohmann::json r = {{prefix + "_max_us", max_ns_ / 1000.0},
                      {prefix + "_total_us", total_ns_ / 1000.0},
                      {prefix + "_limit_us", limits_.window_ns / 1000.0},
                      {prefix + "_long_windows", n_long_},
                      {"n_windows", n_},
                      {"long_windows_allowed", long_windows_allowed()}};
  if (limits_.budget_ns > 0) r[prefix + "_budget_us"] = budget_ns() / 1000.0;
  return r;
}

}  // namespace kernelrl::eval
