#include "solutions/audit_render.hpp"

#include <sstream>

#include "common/format.hpp"
#include "common/table.hpp"
#include "metrics/report_html.hpp"

namespace kernelrl::solutions {

namespace {

using nlohmann::json;

const std::vector<std::string> kHeaders = {"solution", "task", "strict", "kernelbench", "observe", "own kernel",
                                           "fallback", "speedup", "claimed", "claim"};

std::string speed(const std::optional<double>& v) { return v ? common::format_fixed(*v, 2) + "x" : "-"; }

std::string status(const RuleVerdict& v) { return v.status.empty() ? "-" : v.status; }

std::vector<std::string> cells(const AuditRow& r) {
  if (!r.not_evaluated.empty()) {
    return {r.name, r.task.empty() ? "-" : r.task, "-", "-", "-", "-", "-", "-", speed(r.claimed), r.not_evaluated};
  }
  return {r.name, r.task, status(r.strict), status(r.kernelbench), status(r.observe), r.own_kernel, r.fallback,
          speed(r.speedup), speed(r.claimed), r.claim};
}

// "OK 12, REJECTED 3" from {"OK": 12, "REJECTED": 3}.
std::string counts(const json& by_status) {
  std::string out;
  for (const auto& [k, v] : by_status.items()) out += (out.empty() ? "" : ", ") + k + " " + v.dump();
  return out.empty() ? "-" : out;
}

std::vector<std::pair<std::string, std::string>> summary_lines(const json& s) {
  std::vector<std::pair<std::string, std::string>> lines;
  const json statuses = s.value("statuses", json::object());
  lines.push_back({"solutions", s.value("solutions", json(0)).dump() + " (" + s.value("evaluated", json(0)).dump() + " evaluated)"});
  for (const char* rules : {"strict", "kernelbench", "observe", "not evaluated"}) {
    if (statuses.contains(rules)) lines.push_back({rules, counts(statuses[rules])});
  }
  lines.push_back({"own kernel in every call", s.value("own_kernel_every_call", json(0)).dump() + " (recorded on a GPU only)"});
  lines.push_back({"fallbacks (try/except)", s.value("fallback_written", json(0)).dump() + " written, " +
                                                  s.value("fallback_ran", json(0)).dump() + " ran, " +
                                                  s.value("fallback_never_ran", json(0)).dump() + " never ran"});
  const json median = s.value("median_measured_over_claimed", json());
  lines.push_back({"claims", s.value("claims_hold", json(0)).dump() + " of " + s.value("claims", json(0)).dump() +
                                 " measured hold (tolerance " + s.value("claim_tolerance", json(0.1)).dump() + "), " +
                                 s.value("claims_not_measured", json(0)).dump() + " not measured; median measured/claimed " +
                                 (median.is_number() ? speed(median.get<double>()) : std::string("-"))});
  lines.push_back({"time", common::format_fixed(s.value("wall_s", 0.0), 1) + " s on " + s.value("device", std::string("?")) + ", " +
                               s.value("evaluations_run", json(0)).dump() + " evaluations run (" +
                               s.value("evaluations_from_earlier_runs", json(0)).dump() + " from an earlier run, " +
                               s.value("evaluations_missing", json(0)).dump() + " missing)"});
  return lines;
}

}  // namespace

std::string render_audit_text(const std::vector<AuditRow>& rows, const json& summary) {
  common::Table table(kHeaders);
  for (const auto& r : rows) table.add_row(cells(r));
  std::ostringstream out;
  out << table.render() << "\n";
  for (const auto& [k, v] : summary_lines(summary)) out << k << ": " << v << "\n";
  return out.str();
}

std::string render_audit_html(const std::vector<AuditRow>& rows, const json& summary) {
  using metrics::escape_html;
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kernelrl audit</title>\n"
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
         "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}th{background:#eee}"
         ".OK{color:#176f2c}.bad{color:#a31515}</style></head><body>\n<h1>kernelrl audit</h1>\n<h2>Summary</h2>\n<table>\n";
  for (const auto& [k, v] : summary_lines(summary)) out << "<tr><th>" << escape_html(k) << "</th><td>" << escape_html(v) << "</td></tr>\n";
  out << "</table>\n<h2>Solutions</h2>\n<table>\n<tr>";
  for (const auto& h : kHeaders) out << "<th>" << escape_html(h) << "</th>";
  out << "</tr>\n";
  for (const auto& r : rows) {
    const auto c = cells(r);
    const RuleVerdict* verdicts[] = {&r.strict, &r.kernelbench, &r.observe};
    out << "<tr>";
    for (std::size_t i = 0; i < c.size(); ++i) {
      std::string cls, title;
      if (i >= 2 && i <= 4 && r.not_evaluated.empty()) {
        cls = c[i] == "OK" ? "OK" : "bad";
        title = verdicts[i - 2]->reason;
      }
      if (i == 9) cls = r.claim_holds ? "OK" : (r.claim.rfind("does not hold", 0) == 0 ? "bad" : "");
      out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << (title.empty() ? "" : " title=\"" + escape_html(title) + "\"")
          << ">" << escape_html(c[i]) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p>Hover a verdict for its reason. Own kernel and fallback come from the observe run's record of "
         "every call, kept by the solution's process below Python.</p>\n</body></html>\n";
  return out.str();
}

}  // namespace kernelrl::solutions
