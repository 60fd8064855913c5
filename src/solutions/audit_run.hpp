// `kernelrl audit`: a published solution set evaluated with every defense, each solution under the
// strict, kernelbench and observe rule sets, into OUT:
//   OUT/solutions/NAME.py   each solution's code as the set gave it (what the engine evaluated)
//   OUT/records.jsonl       one result record per evaluation, appended as they finish
//   OUT/audit.json          {"summary": ..., "rows": [...]} (solutions/audit_row.hpp)
//   OUT/audit.html          the same table, one self-contained page
// A stopped audit goes on where it stopped: evaluations OUT/records.jsonl already holds are not run
// again. OUT must not hold another set's solutions under the same names.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "eval/engine.hpp"
#include "solutions/audit_row.hpp"

namespace kernelrl::solutions {

struct AuditConfig {
  std::filesystem::path solutions;                // a file or folder (solution_set.hpp)
  std::optional<std::filesystem::path> claims;    // claims file, overriding the set's
  std::filesystem::path tasks;                    // the folder of task files (task_match.hpp)
  std::filesystem::path out = "audit-out";
  double claim_tolerance = 0.1;                   // a claim holds at >= (1 - this) x the claimed speedup
  bool progress = false;                          // a progress bar on stderr
  bool evaluate = true;                           // false: the table from OUT/records.jsonl alone (records
                                                  // brought back from another machine), nothing evaluated
};

struct AuditOutcome {
  std::vector<AuditRow> rows;
  nlohmann::json summary;  // audit_summary(rows) with "wall_s", "evaluations_run", "device"
};

// Evaluates what OUT/records.jsonl lacks on `engines` (at least one unless config.evaluate is
// false; jobs spread over them) and writes the files above. An Error names the set, the task folder or OUT when they cannot be used.
common::Expected<AuditOutcome> run_audit(const AuditConfig& config, const std::vector<eval::Engine*>& engines);

}  // namespace kernelrl::solutions
