#include "engine_options.hpp"

#include <unistd.h>

#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "common/fs.hpp"
#include "task/sizes.hpp"

namespace kernelrl::cli {

namespace {

// This executable's path, which the engine starts as its workers.
std::string self_binary() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "kernelrl";
}

}  // namespace

void add_engine_options(CLI::App* cmd, eval::EngineConfig& config) {
  auto& o = config.options;
  cmd->add_option("--device", o.device, "auto, cuda or cpu")->capture_default_str();
  cmd->add_option("--trials", o.n_trials, "correctness trials on fresh random inputs")->capture_default_str();
  cmd->add_option("--atol", o.atol, "absolute tolerance for float outputs (default per dtype: 1e-2 for float32; 1e-4 under --rules kernelbench or observe)");
  cmd->add_option("--rtol", o.rtol, "relative tolerance for float outputs (default per dtype: 1e-2 for float32; 1e-4 under --rules kernelbench or observe)");
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
           if (!rules) throw CLI::ValidationError("--rules", "'" + name + "' is not a rule set: strict, kernelbench or observe");
           config.rules = *rules;
         },
         "kernelbench candidates: strict (default, for RL: the candidate's own kernels do all the work) or "
         "kernelbench (KernelBench's acceptance, for re-checking published solutions: PyTorch operators may do "
         "part of the work) or observe (kernelbench without its try/except refusal: what each call ran is recorded, "
         "as `kernelrl audit` uses it); every correctness and timing defense applies to all three")
      ->default_str("strict");
  cmd->add_option("--precision", o.precision,
                  "kernelbench: cast both models and the floating-point inputs to fp32, fp16 or bf16 before "
                  "evaluating, as KernelBench's --precision does (default: the task's own dtypes; with --rules "
                  "kernelbench the tolerance is that precision's)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  cmd->add_flag("--allow-torch-ops{false}", o.torch_op_audit,
                "kernelbench: let ModelNew compute with PyTorch operators (by default a trial that runs any beyond "
                "allocating, viewing, copying and filling is REJECTED)");
  cmd->add_flag("--allow-system-calls{false}", config.system_access_check,
                "let built candidates import or make system calls (by default REJECTED: the report channel shares "
                "their process); for testing the sandbox behind that check");
  cmd->add_flag("--host-candidate-in-child{false}", o.separate_process,
                "run host candidates in the evaluating process instead of a process of their own (which keeps "
                "them away from the checker and the report); for measuring what the separation costs");
  cmd->add_flag("--native-in-child{false}", o.native_candidate_process,
                "run native candidates in the evaluating child, beside the reference and the checker, instead of "
                "a process of their own (own CUDA context, tensors shared through CUDA IPC, calls timed on the "
                "host clock); for measuring what their own process costs");
  // Their own process was opt-in under this name until it became the default: still accepted.
  cmd->add_flag("--native-candidate-process", o.native_candidate_process, "the default (see --native-in-child)")->group("");
  // Their own process was opt-in on the CPU under this name until it became the default everywhere.
  cmd->add_flag_callback(
         "--kernelbench-candidate-process", [&o] { o.kernelbench_candidate_process = eval::CandidateProcess::ALWAYS; },
         "the default (see --kernelbench-in-child)")
      ->group("");
  cmd->add_flag_callback(
      "--kernelbench-in-child", [&o] { o.kernelbench_candidate_process = eval::CandidateProcess::NEVER; },
      "run kernelbench candidates in the evaluating child, beside the reference, instead of a process of their "
      "own (own interpreter and CUDA context, outputs copied into shared slots); for measuring what their own "
      "process costs: the candidate can then patch what judges it");
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

std::string quoted_paths(const std::vector<std::filesystem::path>& paths) {
  std::ostringstream out;
  for (std::size_t i = 0; i < paths.size(); ++i) out << (i > 0 ? " " : "") << std::quoted(paths[i].string());
  return out.str();
}

void add_size_option(CLI::App* cmd, std::string& size) {
  cmd->add_option("--size", size,
                  "task size: full (as shipped) or one the tasks' manifest names, e.g. small for CPU runs (tasks/README.md)")
      ->capture_default_str();
}

common::Expected<std::filesystem::path> task_at_size(const std::filesystem::path& task, const std::string& size) {
  auto sized = task::task_at_size(task, size, common::cache_root());
  if (!sized) return sized.error();
  static std::set<std::filesystem::path> noted;
  if (!sized->in_manifest && noted.insert(task).second) {
    std::cerr << "note: " << task.string() << " is in no manifest, so it has no size '" << size << "': evaluated as it is\n";
  }
  return sized->path;
}

void add_compile_options(CLI::App* cmd, EvalArgs& a) {
  cmd->add_flag("--no-cache", a.no_cache, "compile even when the cache has the artifact");
  cmd->add_option("--cache-dir", a.cache_dir, "compile cache folder (default ~/.cache/kernelrl/compile)");
  cmd->add_option("--arch", a.arch, "CUDA compute capability to compile for, e.g. 90 (default: the device's)");
}

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

}  // namespace kernelrl::cli
