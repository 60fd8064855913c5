// How a worker evaluates one stored job: the task and the candidate are written to files (the task
// by content, so its reference timing and the compile cache are shared across jobs; the candidate
// in a folder of its own, removed afterwards), the engine evaluates them with the job's options,
// and the record is the one `kernelrl eval --json` prints, naming the task and candidate as the job did.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"
#include "eval/engine.hpp"
#include "service/job_spec.hpp"

namespace kernelrl::service {

// The files of jobs under one folder. Thread-safe (content-addressed writes are atomic renames).
class JobFiles {
 public:
  explicit JobFiles(std::filesystem::path root) : root_(std::move(root)) {}
  // ROOT/tasks/<content hash>/<task file name> for a task of the service's task sets, and
  // untrusted_task_folder(ROOT)/<content hash>/... for a client's own (and manifest.json beside it
  // when the job has an entry).
  common::Expected<std::filesystem::path> task_file(const JobSpec& spec) const;
  // Where the tasks clients sent as text are written: the engine that evaluates this folder's jobs
  // names it in EngineConfig::untrusted_task_folders, so their code runs only in confined children.
  static std::filesystem::path untrusted_task_folder(const std::filesystem::path& root) { return root / "untrusted-tasks"; }
  // ROOT/jobs/<job id>/<candidate file name>.
  common::Expected<std::filesystem::path> candidate_file(const JobSpec& spec, const std::string& job_id) const;
  void remove_job(const std::string& job_id) const;

 private:
  std::filesystem::path root_;
};

// Evaluates the stored job `spec_json` and returns its record; a job that cannot be evaluated (a
// broken task, a spec that does not parse, files that cannot be written) gets
// {"task", "candidate", "could_not_evaluate": MESSAGE}, as in `kernelrl eval --batch --out`.
nlohmann::json evaluate_job(eval::Engine& engine, const JobFiles& files, const std::string& job_id,
                            const nlohmann::json& spec_json);

}  // namespace kernelrl::service
