// kernelrl: the command-line entry point. Parses arguments and wires the subsystems together;
// all behaviour lives in the libraries under src/.
//
// Exit codes: 0 evaluated (whatever the candidate's status), 2 could not evaluate (bad task, missing
// file, no device; `report`: unreadable trajectories or Chart.js file; `rollout`: a failure that
// stopped the run, or no HTTP policy in this build), 64 usage error. `eval --batch --check-expect` exits 1 when a status differs
// from the entry's "expect"; `tasks check` exits 1 when a task fails its checks; `doctor` exits 2 when
// the engine cannot start.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "common/fs.hpp"
#include "common/progress.hpp"
#include "eval/batch_file.hpp"
#include "eval/engine.hpp"
#include "eval/render.hpp"
#include "eval/task_check.hpp"
#include "eval/worker.hpp"
#include "metrics/metrics.hpp"
#include "metrics/report_html.hpp"
#include "metrics/report_json.hpp"
#include "metrics/report_text.hpp"
#include "metrics/report_train.hpp"
#include "metrics/report_train_html.hpp"
#include "rollout/env_protocol.hpp"
#include "rollout/runner.hpp"
#include "task/sizes.hpp"
#if KERNELRL_HAVE_HTTP_POLICY
#include "rollout/http_policy.hpp"
#endif
#include "doctor_command.hpp"
#include "service_command.hpp"
#include "sft_command.hpp"
#include "train_command.hpp"

namespace {

using namespace kernelrl;

constexpr int kEvaluated = 0;
constexpr int kExpectationFailed = 1;
constexpr int kCouldNotEvaluate = 2;
constexpr int kUsageError = 64;

std::string self_binary() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "kernelrl";
}

struct EvalArgs {
  std::string task, candidate, format, batch, out;
  std::string size = "full";  // task size (task/sizes.hpp)
  bool json = false, no_cache = false, check_expect = false;
  std::string cache_dir, arch;
};

void add_engine_options(CLI::App* cmd, eval::EngineConfig& config) {
  auto& o = config.options;
  cmd->add_option("--device", o.device, "auto, cuda or cpu")->capture_default_str();
  cmd->add_option("--trials", o.n_trials, "correctness trials on fresh random inputs")->capture_default_str();
  cmd->add_option("--atol", o.atol, "absolute tolerance for float outputs (default per dtype: 1e-2 for float32)");
  cmd->add_option("--rtol", o.rtol, "relative tolerance for float outputs (default per dtype: 1e-2 for float32)");
  cmd->add_option("--warmup", o.n_warmup, "untimed calls before timing")->capture_default_str();
  cmd->add_option("--min-reps", o.min_reps, "timed calls at least")->capture_default_str();
  cmd->add_option("--max-reps", o.max_reps, "timed calls at most")->capture_default_str();
  cmd->add_option("--timing-budget-ms", o.timing_budget_ms, "stop timing after this much measured time")
      ->capture_default_str();
  cmd->add_flag("!--no-timing", o.time_kernels, "check correctness only");
  cmd->add_flag("--allow-tf32", o.allow_tf32, "let the reference use TF32 matmuls and convolutions");
  cmd->add_option_function<std::string>(
         "--rules",
         [&config](const std::string& name) {
           auto rules = common::parse_rule_set(name);
           if (!rules) throw CLI::ValidationError("--rules", "'" + name + "' is not a rule set: strict or kernelbench");
           config.rules = *rules;
         },
         "kernelbench candidates: strict (default, for RL: the candidate's own kernels do all the work) or "
         "kernelbench (KernelBench's acceptance, for re-checking published solutions: PyTorch operators may do "
         "part of the work); every correctness and timing defense applies to both")
      ->default_str("strict");
  cmd->add_flag("--allow-torch-ops{false}", o.torch_op_audit,
                "kernelbench: let ModelNew compute with PyTorch operators (by default a trial that runs any beyond "
                "allocating, viewing, copying and filling is REJECTED)");
  cmd->add_flag("--allow-system-calls{false}", config.system_access_check,
                "let built candidates import or make system calls (by default REJECTED: the report channel shares "
                "their process); for testing the sandbox behind that check");
  cmd->add_flag("--host-candidate-in-child{false}", o.separate_process,
                "run host candidates in the evaluating process instead of a process of their own (which keeps "
                "them away from the checker and the report); for measuring what the separation costs");
  cmd->add_option("--timeout-correctness-s", o.timeout_correctness_s,
                  "floor of the correctness phase's wall-time limit (the limit scales with the task: docs/engine.md)")
      ->capture_default_str();
  cmd->add_option("--timeout-timing-s", o.timeout_timing_s, "floor of each timing phase's wall-time limit")
      ->capture_default_str();
  cmd->add_option("--timeout-eager-multiple", o.timeout_eager_multiple,
                  "phase limits: this many times the task's own draw + eager forward per call (0: the floors only)")
      ->capture_default_str();
  cmd->add_option("--compile-timeout-s", config.compile_timeout_s, "wall-time limit of one native/host compile")
      ->capture_default_str();
  cmd->add_option("--compile-threads", config.n_compile_threads, "compile pool size (0: one per core)");
  cmd->add_option("--workers", config.n_workers,
                  "evaluations at once (0: 4 on a GPU, 1 on the CPU); timing is always one at a time");
}

void add_size_option(CLI::App* cmd, std::string& size) {
  cmd->add_option("--size", size,
                  "task size: full (as shipped) or one the tasks' manifest names, e.g. small for CPU runs (tasks/README.md)")
      ->capture_default_str();
}

// The file to evaluate for `task` at `size` (a sized copy, task/sizes.hpp); says once on stderr
// when a task has no manifest entry and so keeps its own size.
common::Expected<std::filesystem::path> task_at_size(const std::filesystem::path& task, const std::string& size) {
  auto sized = task::task_at_size(task, size, common::cache_root());
  if (!sized) return sized.error();
  static std::set<std::filesystem::path> noted;
  if (!sized->in_manifest && noted.insert(task).second) {
    std::cerr << "note: " << task.string() << " is in no manifest, so it has no size '" << size << "': evaluated as it is\n";
  }
  return sized->path;
}

// The compile cache and target options that make_engine() applies.
void add_compile_options(CLI::App* cmd, EvalArgs& a) {
  cmd->add_flag("--no-cache", a.no_cache, "compile even when the cache has the artifact");
  cmd->add_option("--cache-dir", a.cache_dir, "compile cache folder (default ~/.cache/kernelrl/compile)");
  cmd->add_option("--arch", a.arch, "CUDA compute capability to compile for, e.g. 90 (default: the device's)");
}

// The engine configuration the options describe, complete (this binary runs the workers).
eval::EngineConfig resolved_engine_config(eval::EngineConfig config, const EvalArgs& a) {
  config.worker_binary = self_binary();
  config.use_cache = !a.no_cache;
  if (!a.cache_dir.empty()) config.cache_dir = a.cache_dir;
  if (!a.arch.empty()) config.cuda_arch = a.arch;
  return config;
}

common::Expected<std::unique_ptr<eval::Engine>> make_engine(const eval::EngineConfig& config, const EvalArgs& a) {
  return eval::Engine::create(resolved_engine_config(config, a));
}

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

int run_batch(eval::Engine& engine, const EvalArgs& a) {
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
  common::ProgressBar bar("eval", static_cast<std::int64_t>(jobs.size()), common::stderr_is_tty() && !a.json);
  std::ofstream out;
  if (!a.out.empty()) out.open(a.out, std::ios::app);
  int n_ok = 0, n_unexpected = 0;
  auto results = engine.evaluate_batch(jobs, [&](std::size_t i, const common::Expected<eval::EvalResult>& r) {
    if (r && r->correct) ++n_ok;
    nlohmann::json line = r ? nlohmann::json(*r) : nlohmann::json{{"task", jobs[i].task.string()},
                                                                  {"candidate", jobs[i].candidate.string()},
                                                                  {"could_not_evaluate", r.error().message}};
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

struct ReportArgs {
  std::string run;   // run directory or trajectories.jsonl
  std::string html;  // empty: RUN/report.html when `run` is a directory, else no HTML
  std::string chart_js = metrics::default_chart_js_path.string();
  bool json = false;
  bool html_optional = true;  // neither --html nor --chart-js given: a missing Chart.js only skips the HTML
};

int run_report(const ReportArgs& a) {
  // A training run (train_log.jsonl, train.json) gets the training report; anything else is a rollout.
  std::optional<metrics::TrainReport> training;
  std::optional<metrics::Report> rollout;
  if (auto train_dir = metrics::training_run_dir(a.run)) {
    auto report = metrics::train_report_from_run(*train_dir);
    if (!report) {
      std::cerr << "kernelrl report: " << report.error().message << "\n";
      return kCouldNotEvaluate;
    }
    training = std::move(*report);
  } else {
    auto report = metrics::report_from_run(a.run);
    if (!report) {
      std::cerr << "kernelrl report: " << report.error().message << "\n";
      return kCouldNotEvaluate;
    }
    rollout = std::move(*report);
  }
  for (const auto& w : training ? training->warnings : rollout->warnings) {
    std::cerr << "kernelrl report: warning: " << w << "\n";
  }
  std::filesystem::path html_path = a.html;
  std::error_code ec;
  if (html_path.empty() && std::filesystem::is_directory(a.run, ec)) html_path = std::filesystem::path(a.run) / "report.html";
  std::string chart_js;
  if (!html_path.empty()) {
    auto loaded = metrics::load_chart_js(a.chart_js);
    if (!loaded && !a.html_optional) {
      std::cerr << "kernelrl report: " << loaded.error().message << "\n";
      return kCouldNotEvaluate;
    }
    if (!loaded) {
      std::cerr << "kernelrl report: warning: no HTML report: " << loaded.error().message << "\n";
      html_path.clear();
    } else {
      chart_js = std::move(*loaded);
    }
  }
  if (training) {
    std::cout << (a.json ? metrics::to_json(*training).dump(2) + "\n" : metrics::render_train_text(*training));
  } else {
    std::cout << (a.json ? metrics::to_json(*rollout).dump(2) + "\n" : metrics::render_text(*rollout));
  }
  std::cout << std::flush;
  if (html_path.empty()) return kEvaluated;
  const std::string html = training ? metrics::render_train_html(*training, chart_js,
                                                                 std::filesystem::absolute(html_path, ec).parent_path())
                                    : metrics::render_html(*rollout, chart_js);
  auto written = common::write_file_atomic(html_path, html);
  if (!written) {
    std::cerr << "kernelrl report: " << written.error().message << "\n";
    return kCouldNotEvaluate;
  }
  std::cerr << "kernelrl report: wrote " << html_path.string() << "\n";
  return kEvaluated;
}

struct RolloutArgs {
  rollout::RolloutConfig config;
  std::string format = "native", strategy = "mxn", return_kind = "sum", advantage_kind = "grpo_task", advantage_std = "on";
  double speedup_cap = 0;  // 0: none
  // The policy server (policy::ChatClientConfig, which exists only with cpp-httplib).
  std::string base_url = "http://127.0.0.1:8000/v1", model, api_key_env = "OPENAI_API_KEY";
  double temperature = 0.9, top_p = 1.0;
  int max_tokens = 8192;
  bool logprobs = false;
  bool token_ids = false;
};

void add_rollout_options(CLI::App* cmd, RolloutArgs& r) {
  auto& c = r.config;
  cmd->add_option("--tasks", c.tasks, "task files or folders (searched recursively)")->required();
  cmd->add_option("--split", c.split, "tasks of this manifest split")
      ->check(CLI::IsMember({"train", "test", "all"}))->capture_default_str();
  cmd->add_option("--format", r.format, "candidate format the model writes")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}))->capture_default_str();
  cmd->add_option("--strategy", r.strategy, "mxn (m x n), parallel (m x 1), serial (1 x n) or beam")
      ->check(CLI::IsMember({"mxn", "parallel", "serial", "beam"}))->capture_default_str();
  cmd->add_option("--trajectories", c.n_trajectories, "m: trajectories per task")->capture_default_str();
  cmd->add_option("--turns", c.n_turns, "n: turns per trajectory")->capture_default_str();
  cmd->add_option("--beam-width", c.beam_width, "beam: trajectories kept after each turn (divides m)")->capture_default_str();
  cmd->add_option("--concurrency", c.concurrency, "trajectories generating or evaluating at once")->capture_default_str();
  cmd->add_option("--max-policy-failures", c.max_policy_failures,
                  "consecutive turns without a policy response (after retries) that stop the run")
      ->capture_default_str();
  cmd->add_option("--w-correct", c.score.w_correct, "score of a correct kernel on top of its speedup")->capture_default_str();
  cmd->add_option("--gamma", c.returns.gamma, "discount per later turn in a turn's return")->capture_default_str();
  cmd->add_option("--return", r.return_kind, "sum or max of discounted later scores")
      ->check(CLI::IsMember({"sum", "max"}))->capture_default_str();
  cmd->add_option("--advantage", r.advantage_kind, "advantage normalisation")
      ->check(CLI::IsMember({"grpo_task", "grpo_per_turn", "leave_one_out_turn"}))->capture_default_str();
  cmd->add_option("--advantage-std", r.advantage_std,
                  "GRPO advantages: divide by the group's standard deviation (off: Dr. GRPO, mean subtraction only)")
      ->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  cmd->add_option("--speedup-cap", r.speedup_cap, "clip the score's speedup term at this value (0: no cap)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--prompts", c.templates_dir, "prompt templates folder (default: the source tree's prompts/)");
  cmd->add_option("--example", c.example_file, "one-shot example answer (default: examples/vector_add/ for the format)");
  cmd->add_option("--gpu-name", c.prompt.gpu, "GPU named in the native and kernelbench prompts")->capture_default_str();
  cmd->add_option("--prompt-chars", c.prompt.max_chars, "prompt budget; older attempts are dropped first")
      ->capture_default_str();
  cmd->add_option("--out", c.out_dir, "run directory (an existing one is resumed)")->required();
  cmd->add_option("--base-url", r.base_url, "OpenAI-compatible server")->capture_default_str();
  cmd->add_option("--model", r.model, "the server's model name");
  cmd->add_option("--temperature", r.temperature, "sampling temperature")->capture_default_str();
  cmd->add_option("--top-p", r.top_p, "nucleus sampling mass")->capture_default_str();
  cmd->add_option("--max-tokens", r.max_tokens, "generated tokens per response")->capture_default_str();
  cmd->add_option("--api-key-env", r.api_key_env, "environment variable holding the API key")->capture_default_str();
  cmd->add_flag("--logprobs", r.logprobs, "ask for token log-probabilities (stored with each turn)");
  cmd->add_flag("--token-ids", r.token_ids,
                "with --logprobs: ask for tokens as ids (vLLM's return_tokens_as_token_ids), stored with each turn");
}

int run_rollout(RolloutArgs r, const eval::EngineConfig& engine_config, const EvalArgs& a,
                const cli::EvalServiceArgs& eval_service) {
#if KERNELRL_HAVE_HTTP_POLICY
  r.config.format = *common::parse_format(r.format);  // the option checks allow only valid names
  r.config.strategy = *rollout::parse_strategy(r.strategy);
  r.config.returns.kind = r.return_kind == "max" ? rl::ReturnKind::DISCOUNTED_MAX : rl::ReturnKind::DISCOUNTED_SUM;
  r.config.advantage.kind = *rl::parse_advantage_kind(r.advantage_kind);
  r.config.advantage.divide_by_std = r.advantage_std == "on";
  if (r.speedup_cap > 0) r.config.score.speedup_cap = r.speedup_cap;
  if (auto checked = rollout::resolve(r.config); !checked) {  // before the engine takes seconds to start
    std::cerr << "kernelrl rollout: " << checked.error().message << "\n";
    return kUsageError;
  }
  r.config.show_progress = common::stderr_is_tty();
  policy::ChatClientConfig chat;
  chat.base_url = r.base_url;
  chat.model = r.model;
  chat.api_key_env = r.api_key_env;
  chat.temperature = r.temperature;
  chat.top_p = r.top_p;
  chat.max_tokens = r.max_tokens;
  chat.logprobs = r.logprobs;
  chat.token_ids = r.token_ids;
  chat.max_in_flight = r.config.concurrency;
  auto policy = rollout::HttpPolicy::create(chat);
  if (!policy) {
    std::cerr << "kernelrl rollout: " << policy.error().message << "\n";
    return kCouldNotEvaluate;
  }
  auto evaluator = cli::make_evaluator(eval_service, resolved_engine_config(engine_config, a),
                                      [&] { return make_engine(engine_config, a); });
  if (!evaluator) {
    std::cerr << "kernelrl rollout: " << evaluator.error().message << "\n";
    return kCouldNotEvaluate;
  }
  auto summary = rollout::RolloutRunner(r.config, **policy, **evaluator).run();
  if (!summary) {
    std::cerr << "kernelrl rollout: " << summary.error().message << "\n";
    return kCouldNotEvaluate;
  }
  std::cout << "rollout " << r.config.out_dir.string() << (summary->resumed ? " (resumed)" : "") << ": "
            << summary->n_tasks << " tasks, " << summary->n_turns_run << " turns run (" << summary->n_correct_run
            << " correct, " << summary->n_parse_errors_run << " unparsable, " << summary->n_policy_errors_run
            << " without response), " << summary->n_turns_found
            << " found from before, " << summary->n_turns_total << " in all\n";
  return kEvaluated;
#else
  (void)r, (void)engine_config, (void)a, (void)eval_service;
  std::cerr << "kernelrl rollout: this build has no HTTP policy client; HTTP policies need libcpp-httplib "
               "(install libcpp-httplib-dev and reconfigure)\n";
  return kCouldNotEvaluate;
#endif
}

// `kernelrl worker` without --redis is the engine's internal per-device worker (pipes, JSON lines);
// with --redis it is the evaluation service's worker (service_command.hpp).
bool is_internal_worker(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "worker") return false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--redis", 0) == 0) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (is_internal_worker(argc, argv)) {
    int in_fd = -1, out_fd = -1;
    eval::WorkerSettings settings;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--in") in_fd = std::atoi(argv[i + 1]);
      if (flag == "--out") out_fd = std::atoi(argv[i + 1]);
      if (flag == "--device-lock") settings.device_lock_dir = argv[i + 1];
      if (flag == "--cuda-connections") settings.cuda_max_connections = static_cast<unsigned>(std::atoi(argv[i + 1]));
      if (flag == "--warm-children") settings.warm_children = static_cast<unsigned>(std::atoi(argv[i + 1]));
    }
    if (in_fd < 0 || out_fd < 0) {
      std::cerr << "kernelrl worker: without --redis, an internal command of the engine; needs --in FD --out FD "
                   "[--device-lock DIR] [--cuda-connections N] [--warm-children N]. The evaluation service's worker is "
                   "`kernelrl worker --redis URL [--gpus all|0,1,...]`\n";
      return 64;
    }
    return eval::worker_main(in_fd, out_fd, settings);
  }

  CLI::App app{"kernelrl: evaluate and train language models that write fast CUDA kernels"};
  app.require_subcommand(1);
  eval::EngineConfig config;
  EvalArgs a;

  auto* eval_cmd = app.add_subcommand("eval", "compile, run, check and time candidates against task references");
  eval_cmd->add_option("--task", a.task, "task file (KernelBench format)");
  eval_cmd->add_option("--candidate", a.candidate, "candidate file (.cu native, .cpp host, .py kernelbench)");
  eval_cmd->add_option("--format", a.format, "native, host or kernelbench (default: from the extension)")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}));
  eval_cmd->add_option("--batch", a.batch, "JSON list or JSON lines of {task, candidate[, format, device, expect]}");
  eval_cmd->add_flag("--check-expect", a.check_expect, "batch: exit 1 when a status differs from the entry's expect");
  eval_cmd->add_flag("--json", a.json, "print result records as JSON");
  eval_cmd->add_option("--out", a.out, "append result records (JSON lines) to this file");
  add_size_option(eval_cmd, a.size);
  add_compile_options(eval_cmd, a);
  add_engine_options(eval_cmd, config);

  std::string show_task;
  bool show_json = false;
  auto* tasks_cmd = app.add_subcommand("tasks", "inspect tasks");
  tasks_cmd->require_subcommand(1);
  auto* show_cmd = tasks_cmd->add_subcommand("show", "print a task's signature and eager reference time");
  show_cmd->add_option("file", show_task, "task file")->required();
  show_cmd->add_flag("--json", show_json, "print JSON");
  add_size_option(show_cmd, a.size);
  add_engine_options(show_cmd, config);

  std::string check_dir = "tasks";
  double check_min_ref_us = -1;
  double check_max_input_gb = 2;
  bool check_json = false;
  auto* check_cmd = tasks_cmd->add_subcommand("check", "validate every task of a folder on this device");
  check_cmd->add_option("dir", check_dir, "folder of task files (searched recursively)")->capture_default_str();
  check_cmd->add_option("--min-ref-us", check_min_ref_us,
                        "minimum eager reference time (default: 100 on a GPU, none on the CPU)");
  check_cmd->add_option("--max-input-gb", check_max_input_gb, "maximum size of a task's inputs")->capture_default_str();
  check_cmd->add_flag("--json", check_json, "print one JSON line per task");
  std::size_t check_sample = 0;
  check_cmd->add_option("--sample", check_sample,
                        "check only this many tasks, evenly spaced in name order (e.g. on a CPU); 0: all");
  add_size_option(check_cmd, a.size);
  add_engine_options(check_cmd, config);

  ReportArgs report_args;
  auto* report_cmd = app.add_subcommand("report", "metrics of a rollout: terminal tables and a self-contained HTML file");
  report_cmd->add_option("run", report_args.run, "run directory or trajectories.jsonl")->required();
  report_cmd->add_option("--html", report_args.html,
                         "write the HTML report to this file (default: RUN/report.html for a run directory)");
  report_cmd->add_flag("--json", report_args.json, "print the metrics as JSON instead of tables");
  auto* chart_js_option = report_cmd->add_option("--chart-js", report_args.chart_js, "Chart.js file inlined into the HTML report")
      ->capture_default_str();
  auto* html_option = report_cmd->get_option("--html");

  cli::EvalServiceArgs eval_service;
  RolloutArgs rollout_args;
  auto* rollout_cmd = app.add_subcommand("rollout", "multi-turn rollouts of a policy server over tasks (resumable)");
  add_rollout_options(rollout_cmd, rollout_args);
  add_size_option(rollout_cmd, rollout_args.config.task_size);
  add_compile_options(rollout_cmd, a);
  add_engine_options(rollout_cmd, config);
  cli::add_eval_service_options(rollout_cmd, eval_service);

  cli::TrainArgs train_args;
  auto* train_cmd = cli::add_train_command(app, train_args);
  add_size_option(train_cmd, train_args.config.rollout.task_size);
  add_compile_options(train_cmd, a);
  add_engine_options(train_cmd, config);
  cli::add_eval_service_options(train_cmd, eval_service);

  cli::ServeArgs serve_args;
  auto* serve_cmd = cli::add_serve_command(app, serve_args);
  cli::WorkerArgs worker_args;
  auto* worker_cmd = cli::add_worker_command(app, worker_args);
  add_compile_options(worker_cmd, a);
  add_engine_options(worker_cmd, config);
  cli::SftArgs sft_args;
  auto* sft_cmd = cli::add_sft_command(app, sft_args);
  add_size_option(sft_cmd, sft_args.config.tasks.task_size);
  cli::ConvertArgs convert_args;
  auto* convert_cmd = cli::add_convert_command(app, convert_args);
  cli::DoctorArgs doctor_args;
  auto* doctor_cmd = cli::add_doctor_command(app, doctor_args);
  auto* env_cmd = app.add_subcommand(
      "env", "the rollout's prompts, parsing, feedback, scores and credit as JSON lines on stdin/stdout, for "
             "environments in other languages (src/rollout/env_protocol.hpp, python/kernelrl_client)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 64;
  }

  if (eval_cmd->parsed()) {
    bool single = !a.task.empty() || !a.candidate.empty();
    if (single == !a.batch.empty()) {
      std::cerr << "kernelrl eval: give either --task and --candidate, or --batch FILE\n";
      return 64;
    }
    if (single && (a.task.empty() || a.candidate.empty())) {
      std::cerr << "kernelrl eval: --task and --candidate go together\n";
      return 64;
    }
    auto engine = make_engine(config, a);
    if (!engine) {
      std::cerr << "kernelrl eval: could not start the engine: " << engine.error().message << "\n";
      return kCouldNotEvaluate;
    }
    return single ? run_single(**engine, a) : run_batch(**engine, a);
  }
  if (report_cmd->parsed()) {
    report_args.html_optional = html_option->count() == 0 && chart_js_option->count() == 0;
    return run_report(report_args);
  }
  if (rollout_cmd->parsed()) return run_rollout(rollout_args, config, a, eval_service);
  if (train_cmd->parsed()) {
    return cli::run_train(train_args, [&] {
      return cli::make_evaluator(eval_service, resolved_engine_config(config, a), [&] { return make_engine(config, a); });
    });
  }
  if (serve_cmd->parsed()) return cli::run_serve(serve_args);
  if (worker_cmd->parsed()) {
    return cli::run_worker(worker_args, resolved_engine_config(config, a), std::vector<std::string>(argv, argv + argc));
  }
  if (sft_cmd->parsed()) return cli::run_sft(sft_args);
  if (convert_cmd->parsed()) return cli::run_convert(convert_args);
  if (doctor_cmd->parsed()) return cli::run_doctor(doctor_args, [&] { return make_engine(config, a); });
  if (env_cmd->parsed()) return rollout::run_env_protocol(std::cin, std::cout);
  if (show_cmd->parsed()) {
    auto engine = make_engine(config, a);
    if (!engine) {
      std::cerr << "kernelrl tasks show: could not start the engine: " << engine.error().message << "\n";
      return kCouldNotEvaluate;
    }
    auto task = task_at_size(show_task, a.size);
    if (!task) {
      std::cerr << "kernelrl tasks show: " << task.error().message << "\n";
      return kCouldNotEvaluate;
    }
    auto info = (*engine)->task_info(*task);
    if (!info) {
      std::cerr << "kernelrl tasks show: " << info.error().message << "\n";
      return kCouldNotEvaluate;
    }
    if (show_json) {
      std::cout << nlohmann::json{{"task", show_task}, {"signature", task::to_json(info->signature)},
                                  {"ref_runtime", info->ref_runtime}, {"sol_us", info->sol_us}, {"device", info->device},
                                  {"device_info", info->device_info}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << eval::render_task_info(show_task, *info);
    }
    return kEvaluated;
  }
  if (check_cmd->parsed()) {
    auto files = eval::find_task_files(check_dir);
    if (!files) {
      std::cerr << "kernelrl tasks check: " << files.error().message << "\n";
      return kCouldNotEvaluate;
    }
    if (check_sample > 0) *files = eval::evenly_spaced(*files, check_sample);
    std::map<std::string, std::string> shipped;  // sized copy -> the task as found, for the rows
    for (auto& file : *files) {
      auto sized = task_at_size(file, a.size);
      if (!sized) {
        std::cerr << "kernelrl tasks check: " << sized.error().message << "\n";
        return kCouldNotEvaluate;
      }
      shipped[sized->string()] = file.string();
      file = *sized;
    }
    auto engine = make_engine(config, a);
    if (!engine) {
      std::cerr << "kernelrl tasks check: could not start the engine: " << engine.error().message << "\n";
      return kCouldNotEvaluate;
    }
    eval::TaskCheckConfig check;
    check.min_ref_us = check_min_ref_us >= 0 ? check_min_ref_us : ((*engine)->device() == "cuda" ? 100.0 : 0.0);
    check.max_input_bytes = static_cast<std::int64_t>(check_max_input_gb * (1ull << 30));
    common::ProgressBar bar("check", static_cast<std::int64_t>(files->size()), common::stderr_is_tty() && !check_json);
    auto rows = eval::check_tasks(**engine, *files, check, [&](const eval::TaskCheckRow& r) {
      if (check_json) {
        std::cout << nlohmann::json{{"task", shipped[r.task]}, {"size", a.size}, {"ok", r.ok}, {"ref_us", r.ref_us}, {"sol_us", r.sol_us},
                                    {"input_bytes", r.input_bytes}, {"problems", r.problems}, {"device", (*engine)->device()}}
                         .dump()
                  << "\n" << std::flush;
      }
      bar.advance(1, std::filesystem::path(r.task).filename().string());
    });
    bar.finish();
    for (auto& r : rows) r.task = shipped[r.task];
    if (!check_json) std::cout << eval::render_task_check(rows);
    bool all_ok = std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.ok; });
    return all_ok ? kEvaluated : kExpectationFailed;
  }
  return 64;
}
