// One row of `kernelrl audit`'s table: what the records of one solution, evaluated under the strict,
// kernelbench and observe rule sets (common/status.hpp), say of it, and whether its claim holds.
// "Own kernel" and "fallback" are runtime evidence, read from the observe run's record of every
// call (isolation.candidate_process.calls, eval/call_evidence.hpp), never guessed from the code:
// on a GPU, a call that launched no kernel of the solution's own ran something else (its fallback,
// or PyTorch alone); on the CPU, only the PyTorch operators a call ran are recorded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solutions/solution_set.hpp"

namespace kernelrl::solutions {

struct RuleVerdict {
  std::string status;  // "OK", "REJECTED", ...; "" when not evaluated; "could not evaluate"
  std::string reason;  // the record's error message, cut to one line
};

struct AuditRow {
  std::string name;
  std::string task;                   // the task file, or "" when none was found
  std::string not_evaluated;          // why the solution was not evaluated (no code, no task), or ""
  std::optional<double> claimed;
  RuleVerdict strict, kernelbench, observe;
  bool has_fallback = false;          // a try statement in its code
  std::string own_kernel;             // "every call (N)", "K of N calls", "none (0 of N)", "not recorded on the CPU", "-"
  std::string fallback;               // "none written", "never ran", "ran in K of N calls", "-"
  bool fallback_ran = false;
  bool own_kernel_every_call = false; // on a GPU: every call launched a kernel of the solution's own
  std::optional<double> speedup;      // measured under observe (OK only)
  std::optional<double> speedup_kernelbench;  // measured under kernelbench (OK only)
  std::string claim;                  // "holds", "no claim", "not evaluated", "not measured", "does not hold: WHY"
  bool claim_holds = false;
};

// `not_evaluated`: why the solution was not evaluated ("": it was; a solution without code is
// "no solution published" whatever this says). `strict`, `kernelbench`, `observe`: its record
// under each rule set (null: none).
// A claim holds when the observe run is OK, no fallback ran, a kernel of its own ran in every call
// (where that is recorded), and the speedup measured is at least (1 - claim_tolerance) x the claim.
AuditRow audit_row(const Solution& s, const std::string& task, const std::string& not_evaluated, const nlohmann::json& strict,
                   const nlohmann::json& kernelbench, const nlohmann::json& observe, double claim_tolerance);

// Counts over the rows: solutions with a record under any rule set ("evaluated"), statuses per rule
// set ("no record" where a record is missing), own kernels, fallbacks, claims, the median of
// measured over claimed.
nlohmann::json audit_summary(const std::vector<AuditRow>& rows);

nlohmann::json to_json(const AuditRow& row);

// audit.json: {"summary": summary, "rows": [to_json(row), ...]}.
nlohmann::json audit_document(const std::vector<AuditRow>& rows, const nlohmann::json& summary);

}  // namespace kernelrl::solutions
