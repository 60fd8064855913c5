#include "audit_command.hpp"

#include <iostream>

#include "common/progress.hpp"
#include "exit_codes.hpp"
#include "solutions/audit_render.hpp"
#include "solutions/audit_run.hpp"

namespace kernelrl::cli {

CLI::App* add_audit_command(CLI::App& app, AuditArgs& args) {
  auto* cmd = app.add_subcommand(
      "audit",
      "re-check a published solution set with every defense: each solution under the strict, kernelbench and "
      "observe rules; whether a kernel of its own ran in every call and whether a try/except fallback ran (from "
      "its process's record of every call); measured speedup against the one claimed");
  cmd->add_option("solutions", args.solutions,
                  "the set: CUDA-L1's JSON lines (level_id, task_id, custom_code, score_default), a JSON object "
                  "{task: code or {code, speedup}}, or a folder of ModelNew files named by task (with claims.json)")
      ->required();
  cmd->add_option("--tasks", args.tasks, "folder of the tasks' files (levelL/N_name.py as KernelBench names them)")->required();
  cmd->add_option("--claims", args.claims, "JSON object {solution name: claimed speedup}, overriding the set's claims");
  cmd->add_option("--out", args.out, "folder for the solutions' files, records.jsonl, audit.json and audit.html; a stopped "
                                     "audit run again with the same --out goes on where it stopped")
      ->capture_default_str();
  cmd->add_option("--claim-tolerance", args.claim_tolerance,
                  "a claim holds when the measured speedup is at least (1 - this) x the claimed one")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--json", args.json, "print audit.json instead of the table");
  cmd->add_flag("--table-only", args.table_only,
                "evaluate nothing: the table from what --out's records.jsonl holds (records brought back from a GPU "
                "machine); solutions without records show '-'");
  return cmd;
}

int run_audit(const CLI::App& cmd, const AuditArgs& a, const EvalArgs& compile_args, const eval::EngineConfig& config) {
  if (cmd.count("--rules") > 0) {
    std::cerr << "kernelrl audit: --rules does not apply: every solution is judged under strict, kernelbench and observe\n";
    return kUsageError;
  }
  std::vector<eval::Engine*> engines;
  common::Expected<std::unique_ptr<eval::Engine>> engine = common::make_error("not started");
  if (!a.table_only) {
    engine = make_engine(config, compile_args);
    if (!engine) {
      std::cerr << "kernelrl audit: could not start the engine: " << engine.error().message << "\n";
      return kCouldNotEvaluate;
    }
    engines.push_back(engine->get());
  }
  solutions::AuditConfig c;
  c.solutions = a.solutions;
  if (!a.claims.empty()) c.claims = a.claims;
  c.tasks = a.tasks;
  c.out = a.out;
  c.claim_tolerance = a.claim_tolerance;
  c.progress = common::stderr_is_tty() && !a.json;
  c.evaluate = !a.table_only;
  auto outcome = solutions::run_audit(c, engines);
  if (!outcome) {
    std::cerr << "kernelrl audit: " << outcome.error().message << "\n";
    return kCouldNotEvaluate;
  }
  if (a.json) {
    std::cout << solutions::audit_document(outcome->rows, outcome->summary).dump(1) << "\n";
  } else {
    std::cout << solutions::render_audit_text(outcome->rows, outcome->summary)
              << "written: " << (c.out / "audit.json").string() << ", " << (c.out / "audit.html").string() << ", "
              << (c.out / "records.jsonl").string() << "\n";
  }
  return kEvaluated;
}

}  // namespace kernelrl::cli
