// `kernelrl audit SOLUTIONS --tasks DIR`: a published solution set re-checked with every defense
// (src/solutions/audit_run.hpp): each solution under the strict, kernelbench and observe rules,
// a table of verdicts, runtime evidence of its own kernels and fallbacks, and its claims.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine_options.hpp"
#include "eval/engine.hpp"

namespace kernelrl::cli {

struct AuditArgs {
  std::string solutions, tasks, claims, out = "audit-out";
  double claim_tolerance = 0.1;
  bool json = false;
  bool table_only = false;
};

// Registers `audit` and its own options; the caller adds the compile and engine options.
CLI::App* add_audit_command(CLI::App& app, AuditArgs& args);

// Exit codes: 0 audited (whatever the verdicts), 2 the set, the tasks or the engine could not be
// used, 64 usage (--rules: the audit judges under every rule set).
int run_audit(const CLI::App& cmd, const AuditArgs& a, const EvalArgs& compile_args, const eval::EngineConfig& config);

}  // namespace kernelrl::cli
