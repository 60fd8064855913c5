#include "eval/batch_resume.hpp"

#include <fstream>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace kernelrl::eval {

namespace {

struct Record {
  std::string format, device, rules;
  bool used = false;
};

bool matches(const Record& r, const EvalJob& job) {
  if (job.format && r.format != common::to_string(*job.format)) return false;
  if (job.device && r.device != *job.device) return false;
  if (job.rules && r.rules != common::to_string(*job.rules)) return false;
  return true;
}

}  // namespace

common::Expected<ResumePoint> find_resume_point(const std::filesystem::path& records, const std::vector<EvalJob>& jobs) {
  ResumePoint point;
  point.done.assign(jobs.size(), false);
  std::error_code ec;
  if (!std::filesystem::exists(records, ec)) return point;
  std::ifstream in(records, std::ios::binary);
  if (!in) return common::make_error(records.string() + ": cannot read the records to resume from");
  std::map<std::pair<std::string, std::string>, std::vector<Record>> by_job;  // (task, candidate)
  std::string line;
  while (std::getline(in, line)) {
    point.ends_mid_line = in.eof();  // getline stopped at the end of the file, not at a newline
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("task") || !j.contains("candidate")) {
      ++point.n_unreadable;
      continue;
    }
    if (j.contains("could_not_evaluate")) {
      ++point.n_not_evaluated;
      continue;
    }
    ++point.n_records;
    by_job[{j.value("task", ""), j.value("candidate", "")}].push_back(
        Record{j.value("format", ""), j.value("device", ""), j.value("rules", "")});
  }
  if (in.bad()) return common::make_error(records.string() + ": read error");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto it = by_job.find({jobs[i].task.string(), jobs[i].candidate.string()});
    if (it == by_job.end()) continue;
    for (auto& r : it->second) {
      if (!r.used && matches(r, jobs[i])) {
        r.used = true;
        point.done[i] = true;
        break;
      }
    }
  }
  return point;
}

}  // namespace kernelrl::eval
