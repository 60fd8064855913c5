#include "eval_command.hpp"

#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "common/gpu_list.hpp"
#include "common/progress.hpp"
#include "eval/batch_file.hpp"
#include "eval/batch_resume.hpp"
#include "eval/engine_set.hpp"
#include "eval/render.hpp"
#include "exit_codes.hpp"

namespace kernelrl::cli {

namespace {

int run_single(eval::Engine& engine, const EvalArgs& a) {
  auto task = task_at_size(a.task, a.size);
  if (!task) {
    std::cerr << "kernelrl eval: could not evaluate: " << task.error().message << "\n";
    return kCouldNotEvaluate;
  }
  eval::EvalJob job{*task, a.candidate, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  if (!a.format.empty()) job.format = common::parse_format(a.format);
  auto result = engine.evaluate(job);
  if (!result) {
    std::cerr << "kernelrl eval: could not evaluate: " << result.error().message << "\n";
    return kCouldNotEvaluate;
  }
  nlohmann::json j = *result;
  if (!a.out.empty()) std::ofstream(a.out, std::ios::app) << j.dump() << "\n";
  std::cout << (a.json ? j.dump(2) + "\n" : eval::render_result(*result));
  return kEvaluated;
}

// `engines`: one per GPU of `gpus` (empty: one engine on the environment's device).
int run_batch(const std::vector<eval::Engine*>& engines, const std::vector<std::string>& gpus, const EvalArgs& a) {
  const eval::Engine& engine = *engines.front();
  auto entries = eval::read_batch_file(a.batch);
  if (!entries) {
    std::cerr << "kernelrl eval: " << entries.error().message << "\n";
    return kCouldNotEvaluate;
  }
  std::vector<eval::EvalJob> jobs;
  std::vector<eval::BatchEntry> kept;
  for (auto& e : *entries) {
    if (e.device == "cuda" && engine.device() != "cuda") {  // "cpu" entries run anywhere
      std::cerr << "skipped (needs " << *e.device << ", this run is on " << engine.device() << "): "
                << e.job.candidate.string() << "\n";
      continue;
    }
    auto task = task_at_size(e.job.task, a.size);
    if (!task) {
      std::cerr << "kernelrl eval: " << task.error().message << "\n";
      return kCouldNotEvaluate;
    }
    e.job.task = *task;
    jobs.push_back(e.job);
    kept.push_back(e);
  }
  bool newline_first = false;
  if (a.resume) {  // leave out the jobs the records of an earlier run already have
    auto point = eval::find_resume_point(a.out, jobs);
    if (!point) {
      std::cerr << "kernelrl eval: " << point.error().message << "\n";
      return kCouldNotEvaluate;
    }
    std::vector<eval::EvalJob> left;
    std::vector<eval::BatchEntry> left_entries;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (point->done[i]) continue;
      left.push_back(jobs[i]);
      left_entries.push_back(kept[i]);
    }
    std::cerr << "resuming " << a.out << ": " << jobs.size() - left.size() << " of " << jobs.size()
              << " jobs already have a record; evaluating the " << left.size() << " left"
              << (point->n_not_evaluated ? " (" + std::to_string(point->n_not_evaluated) + " could-not-evaluate lines run again)" : "")
              << (point->n_unreadable ? " (" + std::to_string(point->n_unreadable) + " unreadable lines skipped, kept in the file)" : "")
              << "\n";
    jobs = std::move(left);
    kept = std::move(left_entries);
    newline_first = point->ends_mid_line;
  }
  common::ProgressBar bar("eval", static_cast<std::int64_t>(jobs.size()), common::stderr_is_tty() && !a.json);
  std::ofstream out;
  if (!a.out.empty()) out.open(a.out, std::ios::app);
  if (out && newline_first) out << "\n";  // a line cut off by a stopped run stays, on its own
  int n_ok = 0, n_unexpected = 0;
  auto results = eval::evaluate_spread(engines, jobs, [&](std::size_t i, std::size_t on, const common::Expected<eval::EvalResult>& r) {
    if (r && r->correct) ++n_ok;
    nlohmann::json line = r ? nlohmann::json(*r) : nlohmann::json{{"task", jobs[i].task.string()},
                                                                  {"candidate", jobs[i].candidate.string()},
                                                                  {"could_not_evaluate", r.error().message}};
    if (gpus.size() > 1) line["gpu"] = gpus[on];  // its CUDA_VISIBLE_DEVICES value
    if (kept[i].expect) {
      bool as_expected = r && r->status == *kept[i].expect;
      line["expect"] = std::string(common::to_string(*kept[i].expect));
      line["as_expected"] = as_expected;
      if (!as_expected) {
        ++n_unexpected;
        bar.log("UNEXPECTED " + jobs[i].candidate.string() + ": expected " +
                std::string(common::to_string(*kept[i].expect)) + ", got " +
                (r ? std::string(common::to_string(r->status)) + " (" + r->error.message + ")" : r.error().message));
      }
    }
    if (out) out << line.dump() << "\n" << std::flush;
    if (a.json) std::cout << line.dump() << "\n" << std::flush;
    bar.set_suffix("ok " + std::to_string(n_ok));
    bar.advance(1, jobs[i].candidate.filename().string());
  });
  bar.finish();
  std::vector<std::string> labels;
  for (const auto& j : jobs) labels.push_back(j.candidate.string());
  if (!a.json) std::cout << eval::render_summary(labels, results);
  if (a.check_expect && n_unexpected > 0) {
    std::cerr << n_unexpected << " result(s) differ from their expected status\n";
    return kExpectationFailed;
  }
  for (const auto& r : results) {
    if (!r) return kCouldNotEvaluate;
  }
  return kEvaluated;
}

// One engine per GPU of `gpus` (one on the environment's device when it is empty), into `engines`.
// Returns kEvaluated, or the exit code of the failure it printed.
int start_engines(const eval::EngineConfig& config, const EvalArgs& a, const std::vector<std::string>& gpus,
                  std::vector<std::unique_ptr<eval::Engine>>& engines) {
  for (std::size_t g = 0; g < std::max<std::size_t>(1, gpus.size()); ++g) {
    eval::EngineConfig per_gpu = config;
    if (!gpus.empty()) per_gpu.gpu = gpus[g];
    if (gpus.size() > 1 && per_gpu.n_compile_threads == 0) {  // the host's cores shared between the engines' pools
      per_gpu.n_compile_threads = std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(gpus.size()));
    }
    auto engine = make_engine(per_gpu, a);
    if (!engine) {
      std::cerr << "kernelrl eval: could not start the engine" << (gpus.empty() ? "" : " on GPU " + gpus[g]) << ": "
                << engine.error().message << "\n";
      return kCouldNotEvaluate;
    }
    if (!gpus.empty() && (*engine)->device() != "cuda") {
      std::cerr << "kernelrl eval: --gpus " << a.gpus << ": GPU " << gpus[g] << " is not usable here (the engine found no GPU)\n";
      return kUsageError;
    }
    engines.push_back(std::move(*engine));
  }
  return kEvaluated;
}

}  // namespace

CLI::App* add_eval_command(CLI::App& app, EvalArgs& args) {
  auto* cmd = app.add_subcommand("eval", "compile, run, check and time candidates against task references");
  cmd->add_option("--task", args.task, "task file (KernelBench format)");
  cmd->add_option("--candidate", args.candidate, "candidate file (.cu native, .cpp host, .py kernelbench)");
  cmd->add_option("--format", args.format, "native, host or kernelbench (default: from the extension)")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}));
  cmd->add_option("--batch", args.batch, "JSON list or JSON lines of {task, candidate[, format, device, expect]}");
  cmd->add_flag("--check-expect", args.check_expect, "batch: exit 1 when a status differs from the entry's expect");
  cmd->add_flag("--json", args.json, "print result records as JSON");
  cmd->add_option("--out", args.out, "append result records (JSON lines) to this file");
  cmd->add_flag("--resume", args.resume,
                "batch: leave out the jobs --out already has a record for (an earlier run of the batch that was stopped); "
                "the summary and --check-expect then cover the jobs evaluated now");
  cmd->add_option("--gpus", args.gpus,
                  "all (CUDA_VISIBLE_DEVICES if set, else every GPU) or 0,1,...: one engine per GPU, the batch's jobs "
                  "handed to whichever has room; each record then says its \"gpu\". Default: the environment's device");
  return cmd;
}

int run_eval(const EvalArgs& a, const eval::EngineConfig& config) {
  bool single = !a.task.empty() || !a.candidate.empty();
  if (a.resume && (a.batch.empty() || a.out.empty())) {
    std::cerr << "kernelrl eval: --resume goes with --batch and --out (the records of the run to resume)\n";
    return kUsageError;
  }
  if (single == !a.batch.empty()) {
    std::cerr << "kernelrl eval: give either --task and --candidate, or --batch FILE\n";
    return kUsageError;
  }
  if (single && (a.task.empty() || a.candidate.empty())) {
    std::cerr << "kernelrl eval: --task and --candidate go together\n";
    return kUsageError;
  }
  std::vector<std::string> gpus;
  if (!a.gpus.empty()) {
    auto resolved = common::resolve_gpus(a.gpus);
    if (!resolved) {
      std::cerr << "kernelrl eval: " << resolved.error().message << "\n";
      return kUsageError;
    }
    gpus = std::move(*resolved);
    if (single && gpus.size() > 1) {
      std::cerr << "kernelrl eval: one candidate runs on one GPU; --gpus with several is for --batch\n";
      return kUsageError;
    }
  }
  std::vector<std::unique_ptr<eval::Engine>> engines;
  if (const int code = start_engines(config, a, gpus, engines); code != kEvaluated) return code;
  if (single) return run_single(*engines.front(), a);
  std::vector<eval::Engine*> raw;
  for (auto& e : engines) raw.push_back(e.get());
  return run_batch(raw, gpus, a);
}

}  // namespace kernelrl::cli
