#include "solutions/audit_row.hpp"

#include <algorithm>
#include <map>

#include "common/format.hpp"
#include "compile/python_scan.hpp"

namespace kernelrl::solutions {

namespace {

using nlohmann::json;

std::string one_line(std::string s, std::size_t max = 160) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

RuleVerdict verdict_of(const json& r) {
  if (!r.is_object()) return {};
  if (r.contains("could_not_evaluate")) return {"could not evaluate", one_line(r.value("could_not_evaluate", ""))};
  RuleVerdict v{r.value("status", "?"), ""};
  if (r.contains("error") && r["error"].is_object()) v.reason = one_line(r["error"].value("message", ""));
  return v;
}

std::optional<double> speedup_of(const json& r) {
  if (!r.is_object() || r.value("status", "") != "OK") return std::nullopt;
  const double s = r.value("speedup", 0.0);
  return s > 0 ? std::optional<double>(s) : std::nullopt;
}

std::string k_of_n(std::int64_t k, std::int64_t n) { return std::to_string(k) + " of " + std::to_string(n) + " calls"; }

// What the observe run's call records say: own kernels and fallbacks.
void read_evidence(AuditRow& row, const json& observe) {
  row.own_kernel = "-";
  row.fallback = row.has_fallback ? "-" : "none written";
  if (!observe.is_object()) return;
  const json calls = observe.value("/isolation/candidate_process/calls"_json_pointer, json());
  if (!calls.is_object() || calls.value("calls", 0) == 0) return;
  const std::int64_t n = calls.value("calls", 0);
  const bool gpu = calls.contains("with_own_kernels");
  // Evidence with a hole says so instead of a reading.
  if (calls.value("records", 0) < n) {
    row.own_kernel = "no record of " + std::to_string(n - calls.value("records", 0)) + " of " + std::to_string(n) + " calls";
    return;
  }
  if (!calls.value("ops_intact", false)) {
    row.own_kernel = "operator record switched off";
    return;
  }
  if (gpu && !calls.value("launches_intact", false)) {
    row.own_kernel = "launch record switched off";
    return;
  }
  if (gpu) {
    const std::int64_t own = calls.value("with_own_kernels", 0);
    row.own_kernel_every_call = own == n;
    row.own_kernel = own == n ? "every call (" + std::to_string(n) + ")" : own == 0 ? "none (0 of " + std::to_string(n) + ")"
                                                                                 : k_of_n(own, n);
    if (row.has_fallback) {
      // Calls in which no launch of its own succeeded (a launch the driver refused ran nothing)
      // ran the fallback; so did, when only some calls ran PyTorch compute, those calls (a
      // fallback after an own kernel that ran but raised later). PyTorch in every call cannot be
      // told from PyTorch on its main path.
      const std::int64_t without = calls.value("without_own_kernels", 0);
      const std::int64_t torch_calls = calls.value("with_refused_ops", 0);
      const std::int64_t ran = std::max(without, torch_calls < n ? torch_calls : 0);
      row.fallback_ran = ran > 0;
      row.fallback = ran > 0                ? "ran in " + k_of_n(ran, n)
                     : torch_calls == n ? "cannot tell: PyTorch computed in every call"
                                        : "never ran";
    }
    return;
  }
  row.own_kernel = "not recorded on the CPU";
  if (row.has_fallback) {
    const std::int64_t torch_calls = calls.value("with_refused_ops", 0);
    row.fallback_ran = torch_calls > 0;
    row.fallback = torch_calls == 0 ? "never ran" : "ran in " + k_of_n(torch_calls, n) + " (PyTorch compute)";
  }
}

void judge_claim(AuditRow& row, double tolerance) {
  if (!row.claimed) {
    row.claim = row.not_evaluated.empty() ? "no claim" : "not evaluated";
    return;
  }
  if (!row.not_evaluated.empty()) {
    row.claim = "not evaluated";
    return;
  }
  if (row.observe.status.empty()) {
    row.claim = "not measured";  // no observe record (yet): an audit stopped early, or --table-only
    return;
  }
  if (row.observe.status != "OK") {
    row.claim = "does not hold: " + row.observe.status;
    return;
  }
  if (row.fallback_ran) {
    row.claim = "does not hold: its fallback ran";
    return;
  }
  if (row.own_kernel.rfind("every call", 0) != 0 && row.own_kernel != "not recorded on the CPU") {
    row.claim = "does not hold: own kernel in " + row.own_kernel;
    return;
  }
  if (!row.speedup) {
    row.claim = "does not hold: no speedup measured";
    return;
  }
  if (*row.speedup < (1.0 - tolerance) * *row.claimed) {
    row.claim = "does not hold: " + common::format_fixed(*row.speedup, 2) + "x measured";
    return;
  }
  row.claim = "holds";
  row.claim_holds = true;
}

}  // namespace

AuditRow audit_row(const Solution& s, const std::string& task, const std::string& not_evaluated, const json& strict,
                   const json& kernelbench, const json& observe, double claim_tolerance) {
  AuditRow row;
  row.name = s.name;
  row.task = task;
  row.claimed = s.claimed_speedup;
  row.not_evaluated = s.code.empty() ? "no solution published" : not_evaluated;
  row.has_fallback = !s.code.empty() && compile::detail::has_try_statement(s.code);
  row.strict = verdict_of(strict);
  row.kernelbench = verdict_of(kernelbench);
  row.observe = verdict_of(observe);
  row.speedup = speedup_of(observe);
  row.speedup_kernelbench = speedup_of(kernelbench);
  read_evidence(row, observe);
  judge_claim(row, claim_tolerance);
  return row;
}

json to_json(const AuditRow& r) {
  auto verdict = [](const RuleVerdict& v) { return json{{"status", v.status}, {"reason", v.reason}}; };
  json j = {{"name", r.name},
            {"task", r.task},
            {"strict", verdict(r.strict)},
            {"kernelbench", verdict(r.kernelbench)},
            {"observe", verdict(r.observe)},
            {"has_fallback", r.has_fallback},
            {"fallback", r.fallback},
            {"fallback_ran", r.fallback_ran},
            {"own_kernel", r.own_kernel},
            {"own_kernel_every_call", r.own_kernel_every_call},
            {"claim", r.claim},
            {"claim_holds", r.claim_holds}};
  if (!r.not_evaluated.empty()) j["not_evaluated"] = r.not_evaluated;
  j["claimed_speedup"] = r.claimed ? json(*r.claimed) : json();
  j["speedup"] = r.speedup ? json(*r.speedup) : json();
  j["speedup_kernelbench"] = r.speedup_kernelbench ? json(*r.speedup_kernelbench) : json();
  return j;
}

json audit_document(const std::vector<AuditRow>& rows, const json& summary) {
  json out = json::array();
  for (const auto& r : rows) out.push_back(to_json(r));
  return {{"summary", summary}, {"rows", out}};
}

json audit_summary(const std::vector<AuditRow>& rows) {
  std::map<std::string, std::map<std::string, int>> statuses;
  int evaluated = 0, own_every = 0, fallback_written = 0, fallback_ran = 0, fallback_never = 0, claims = 0, hold = 0;
  int claims_not_measured = 0;
  std::vector<double> ratios;
  for (const auto& r : rows) {
    if (!r.not_evaluated.empty()) {
      ++statuses["not evaluated"][r.not_evaluated];
      claims_not_measured += r.claimed.has_value();
      continue;
    }
    evaluated += !r.strict.status.empty() || !r.kernelbench.status.empty() || !r.observe.status.empty();
    ++statuses["strict"][r.strict.status.empty() ? "no record" : r.strict.status];
    ++statuses["kernelbench"][r.kernelbench.status.empty() ? "no record" : r.kernelbench.status];
    ++statuses["observe"][r.observe.status.empty() ? "no record" : r.observe.status];
    own_every += r.own_kernel_every_call;
    if (r.has_fallback) {
      ++fallback_written;
      fallback_ran += r.fallback_ran;
      fallback_never += r.fallback == "never ran";
    }
    if (r.claimed && r.observe.status.empty()) {
      ++claims_not_measured;
    } else if (r.claimed) {
      ++claims;
      hold += r.claim_holds;
      if (r.speedup) ratios.push_back(*r.speedup / *r.claimed);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  json median = ratios.empty() ? json() : json(ratios.size() % 2 ? ratios[ratios.size() / 2]
                                                                 : (ratios[ratios.size() / 2 - 1] + ratios[ratios.size() / 2]) / 2);
  return {{"solutions", rows.size()},
          {"evaluated", evaluated},
          {"statuses", statuses},
          {"own_kernel_every_call", own_every},
          {"fallback_written", fallback_written},
          {"fallback_ran", fallback_ran},
          {"fallback_never_ran", fallback_never},
          {"claims", claims},
          {"claims_hold", hold},
          {"claims_not_measured", claims_not_measured},
          {"median_measured_over_claimed", median}};
}

}  // namespace kernelrl::solutions
