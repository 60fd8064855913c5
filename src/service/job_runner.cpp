#include "service/job_runner.hpp"

#include "common/fs.hpp"
#include "common/hash.hpp"

namespace kernelrl::service {

namespace fs = std::filesystem;

namespace {

// The last component of a client-given name, never "", "." or "..".
std::string file_name(const std::string& name, const std::string& fallback) {
  const std::string base = fs::path(name).filename().string();
  return base.empty() || base == "." || base == ".." ? fallback : base;
}

nlohmann::json could_not_evaluate(const std::string& task, const std::string& candidate, const std::string& message) {
  return {{"task", task}, {"candidate", candidate}, {"could_not_evaluate", message}};
}

}  // namespace

common::Expected<fs::path> JobFiles::task_file(const JobSpec& spec) const {
  const std::string name = file_name(spec.task_name, "task.py");
  const fs::path folder = spec.task_from_set ? root_ / "tasks" : untrusted_task_folder(root_);
  const fs::path dir = folder / common::hash_hex(spec.task_source + "\n" + spec.task_manifest.dump() + "\n" + name);
  const fs::path file = dir / name;
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) return file;
  fs::create_directories(dir, ec);
  if (ec) return common::make_error(dir.string() + ": cannot create: " + ec.message());
  if (spec.task_manifest.is_object()) {
    nlohmann::json entry = spec.task_manifest.value("entry", nlohmann::json::object());
    entry["file"] = name;
    const nlohmann::json manifest = {{"level", spec.task_manifest.value("level", 0)}, {"tasks", {entry}}};
    if (auto w = common::write_file_atomic(dir / "manifest.json", manifest.dump()); !w) return w.error();
  }
  if (auto w = common::write_file_atomic(file, spec.task_source); !w) return w.error();  // last: its presence means done
  return file;
}

common::Expected<fs::path> JobFiles::candidate_file(const JobSpec& spec, const std::string& job_id) const {
  const fs::path dir = root_ / "jobs" / job_id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return common::make_error(dir.string() + ": cannot create: " + ec.message());
  const fs::path file = dir / file_name(spec.candidate_name, "candidate");
  if (auto w = common::write_file_atomic(file, spec.candidate_source); !w) return w.error();
  return file;
}

void JobFiles::remove_job(const std::string& job_id) const { (void)common::remove_tree(root_ / "jobs" / job_id); }

nlohmann::json evaluate_job(eval::Engine& engine, const JobFiles& files, const std::string& job_id,
                            const nlohmann::json& spec_json) {
  auto spec = from_stored(spec_json);
  if (!spec) {
    return could_not_evaluate(spec_json.value("task_name", ""), spec_json.value("candidate_name", ""),
                              "job " + job_id + ": " + spec.error().message);
  }
  auto task = files.task_file(*spec);
  auto candidate = task ? files.candidate_file(*spec, job_id) : common::Expected<fs::path>(task.error());
  if (!candidate) {
    return could_not_evaluate(spec->task_name, spec->candidate_name, "the worker cannot write the job's files: " +
                                                                         candidate.error().message);
  }
  eval::EvalJob job{*task, *candidate, spec->format, spec->device, spec->rules, std::nullopt};
  if (!spec->options.empty()) {
    nlohmann::json merged = nlohmann::json(eval::EvalOptions{});
    merged.update(spec->options);
    job.options = merged.get<eval::EvalOptions>();  // checked field by field when the job was submitted
  }
  auto result = engine.evaluate(job);
  files.remove_job(job_id);
  if (!result) {
    // The engine's messages name the local files; the client knows the job's own names.
    std::string message = result.error().message;
    for (const auto& [local, named] : {std::pair{task->string(), spec->task_name},
                                       std::pair{candidate->string(), spec->candidate_name}}) {
      for (auto at = message.find(local); at != std::string::npos; at = message.find(local, at + named.size())) {
        message.replace(at, local.size(), named);
      }
    }
    return could_not_evaluate(spec->task_name, spec->candidate_name, message);
  }
  nlohmann::json record = *result;
  record["task"] = spec->task_name;
  record["candidate"] = spec->candidate_name;
  return record;
}

}  // namespace kernelrl::service
