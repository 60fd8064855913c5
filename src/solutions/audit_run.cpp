#include "solutions/audit_run.hpp"

#include <chrono>
#include <fstream>
#include <map>

#include "common/fs.hpp"
#include "common/progress.hpp"
#include "common/status.hpp"
#include "eval/batch_resume.hpp"
#include "eval/engine_set.hpp"
#include "solutions/audit_render.hpp"
#include "solutions/solution_set.hpp"
#include "solutions/task_match.hpp"

namespace kernelrl::solutions {

namespace {

using nlohmann::json;

constexpr common::RuleSet kRuleSets[] = {common::RuleSet::STRICT, common::RuleSet::KERNELBENCH, common::RuleSet::OBSERVE};

struct Planned {
  Solution solution;
  std::filesystem::path task;       // empty: not evaluated (row.not_evaluated says why)
  std::string not_evaluated;
  std::filesystem::path candidate;  // OUT/solutions/NAME.py
};

// Writes each solution's code below OUT/solutions (or finds it there, unchanged, from an earlier run).
common::Fallible write_solutions(std::vector<Planned>& plan, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return common::make_error(dir.string() + ": cannot create it: " + ec.message());
  for (auto& p : plan) {
    if (p.solution.code.empty() || p.task.empty()) continue;
    p.candidate = dir / (file_name_for(p.solution.name) + ".py");
    if (std::filesystem::exists(p.candidate, ec)) {
      auto there = common::read_file(p.candidate, p.solution.code.size() + 1);  // larger: other code
      if (there && *there == p.solution.code) continue;
      return common::make_error(p.candidate.string() + " holds other code than " + p.solution.origin +
                                ": this folder belongs to another audit; give another --out");
    }
    if (auto written = common::write_file_atomic(p.candidate, p.solution.code); !written) return written.error();
  }
  return common::Ok{};
}

// Every record of OUT/records.jsonl by (candidate, rules); the last one of a pair wins.
std::map<std::pair<std::string, std::string>, json> read_records(const std::filesystem::path& path) {
  std::map<std::pair<std::string, std::string>, json> by_job;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_object() || !r.contains("candidate")) continue;
    std::pair<std::string, std::string> job{r.value("candidate", ""), r.value("rules", "strict")};
    by_job[std::move(job)] = std::move(r);
  }
  return by_job;
}

}  // namespace

common::Expected<AuditOutcome> run_audit(const AuditConfig& config, const std::vector<eval::Engine*>& engines) {
  const auto t0 = std::chrono::steady_clock::now();
  auto set = read_solution_set(config.solutions, config.claims);
  if (!set) return set.error();
  auto index = TaskIndex::scan(config.tasks);
  if (!index) return index.error();
  std::vector<Planned> plan;
  for (auto& s : *set) {
    Planned p{std::move(s), {}, {}, {}};
    if (p.solution.code.empty()) {
      p.not_evaluated = "no solution published";
    } else if (auto task = index->find(p.solution)) {
      p.task = *task;
    } else {
      p.not_evaluated = task.error().message;
    }
    plan.push_back(std::move(p));
  }
  if (auto written = write_solutions(plan, config.out / "solutions"); !written) return written.error();

  std::vector<eval::EvalJob> jobs;
  for (const auto& p : plan) {
    if (p.candidate.empty()) continue;
    for (auto rules : kRuleSets) jobs.push_back(eval::EvalJob{p.task, p.candidate, common::Format::KERNELBENCH, std::nullopt, rules, std::nullopt});
  }
  const std::filesystem::path records = config.out / "records.jsonl";
  auto point = eval::find_resume_point(records, jobs);
  if (!point) return point.error();
  std::vector<eval::EvalJob> left;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (!point->done[i]) left.push_back(jobs[i]);
  }
  const std::size_t n_missing = left.size();
  if (!config.evaluate) left.clear();
  if (!left.empty() && engines.empty()) return common::make_error("no engine to evaluate the solutions on");
  if (!left.empty()) {
    std::ofstream out(records, std::ios::app);
    if (!out) return common::make_error(records.string() + ": cannot append to it");
    if (point->ends_mid_line) out << "\n";
    common::ProgressBar bar("audit", static_cast<std::int64_t>(left.size()), config.progress);
    eval::evaluate_spread(engines, left, [&](std::size_t i, std::size_t, const common::Expected<eval::EvalResult>& r) {
      json line = r ? json(*r) : json{{"task", left[i].task.string()}, {"candidate", left[i].candidate.string()},
                                      {"could_not_evaluate", r.error().message}};
      line["rules"] = std::string(common::to_string(*left[i].rules));
      out << line.dump() << "\n" << std::flush;
      bar.advance(1, left[i].candidate.filename().string());
    });
  }

  const auto by_job = read_records(records);
  auto record = [&](const Planned& p, common::RuleSet rules) {
    const auto it = by_job.find({p.candidate.string(), std::string(common::to_string(rules))});
    return it == by_job.end() ? json() : it->second;
  };
  AuditOutcome outcome;
  for (const auto& p : plan) {
    std::string task = p.task.empty() ? "" : std::filesystem::relative(p.task, config.tasks).string();
    outcome.rows.push_back(audit_row(p.solution, task, p.not_evaluated, record(p, common::RuleSet::STRICT),
                                     record(p, common::RuleSet::KERNELBENCH), record(p, common::RuleSet::OBSERVE),
                                     config.claim_tolerance));
  }
  outcome.summary = audit_summary(outcome.rows);
  outcome.summary["evaluations_run"] = left.size();
  outcome.summary["evaluations_from_earlier_runs"] = jobs.size() - n_missing;
  outcome.summary["evaluations_missing"] = n_missing - left.size();
  outcome.summary["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  outcome.summary["device"] = engines.empty() ? std::string("none (the table from records only)") : engines.front()->device();
  outcome.summary["claim_tolerance"] = config.claim_tolerance;
  const json doc = audit_document(outcome.rows, outcome.summary);
  if (auto w = common::write_file_atomic(config.out / "audit.json", doc.dump(1) + "\n"); !w) return w.error();
  if (auto w = common::write_file_atomic(config.out / "audit.html", render_audit_html(outcome.rows, outcome.summary)); !w) {
    return w.error();
  }
  return outcome;
}

}  // namespace kernelrl::solutions
