// Benchmarks of the evaluation engine, all measured in one run on this machine:
//   1. cold compile and cache hit per native candidate (sequential, uncontended)
//   2. throughput of a batch through the native path vs the same kernels through the kernelbench
//      (load_inline) path, as a ratio; per-candidate overhead beyond the kernels' own GPU time, in
//      the batch and for one candidate on an idle engine
//   3. timing fidelity: one kernel evaluated 5 times (reference re-timed each time)
// usage: kernelrl_bench CANDIDATE_DIR [--skip-kernelbench | --only-kernelbench | --compile-only | --native-batch-only]
//                       [--fidelity-task T --fidelity-candidate C] [--native-per-min X]
// (--native-per-min: with --only-kernelbench, the native throughput measured earlier in the same
// run, for the ratio row; the kernelbench path can take long enough to run as its own step)
// Each row is printed as soon as it is measured, and the whole table at the end.
// CANDIDATE_DIR comes from bench/make_candidates.py (native.json, kernelbench.json).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/fs.hpp"
#include "common/table.hpp"
#include "compile/compiler.hpp"
#include "eval/batch_file.hpp"
#include "bench_util.hpp"
#include "eval/engine.hpp"
#include "eval/stats.hpp"

using namespace kernelrl;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

using bench::fmt;
using bench::self_dir;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

eval::EngineConfig engine_config(const fs::path& cache) {
  eval::EngineConfig c;
  c.worker_binary = self_dir() + "/../tools/kernelrl/kernelrl";
  c.cache_dir = cache;
  return c;
}

// The kernels' own GPU time in one evaluation: every candidate call (trials, warm-up, timed) and
// every reference call (setup, trials, recheck, and its timing when this evaluation timed it).
double own_gpu_ms(const eval::EvalResult& r, const eval::EvalOptions& o) {
  const double cand_calls = o.n_trials + o.n_warmup + r.runtime.n;
  const double ref_calls = o.n_trials + 1 + std::min(2, o.n_trials) +
                           (r.phases_ms.count("timing.reference") ? o.n_warmup + r.ref_runtime.n : 0);
  return (cand_calls * r.runtime.mean_us + ref_calls * r.ref_runtime.mean_us) / 1000.0;
}

// Compile and child time of one evaluation beyond its kernels' own GPU time.
double latency_beyond_gpu_ms(const eval::EvalResult& r, const eval::EvalOptions& o) {
  auto phase = [&](const char* k) { return r.phases_ms.count(k) ? r.phases_ms.at(k) : 0.0; };
  return phase("compile") + phase("child_total") - own_gpu_ms(r, o);
}

struct BatchRun {
  int n = 0, n_correct = 0;
  double wall_s = 0;
  double gpu_ms_per_candidate = 0;  // the kernels' own time: every candidate and reference call
  std::map<std::string, std::vector<double>> phase_ms;  // every phase of every result
  std::vector<double> latency_beyond_gpu_ms;             // compile + child, less the candidate's own GPU time
};

BatchRun run_batch(const fs::path& batch, const fs::path& cache, const eval::EngineConfig& base,
                   std::size_t max_jobs = SIZE_MAX) {
  BatchRun run;
  auto entries = eval::read_batch_file(batch);
  if (!entries) {
    std::cerr << entries.error().message << "\n";
    return run;
  }
  std::vector<eval::EvalJob> jobs;
  for (auto& e : *entries) {
    if (jobs.size() < max_jobs) jobs.push_back(e.job);
  }
  eval::EngineConfig config = base;
  config.cache_dir = cache;
  auto engine = eval::Engine::create(config);
  if (!engine) {
    std::cerr << "engine: " << engine.error().message << "\n";
    return run;
  }
  auto t0 = clock_type::now();
  auto results = (*engine)->evaluate_batch(jobs);
  run.wall_s = seconds_since(t0);
  run.n = static_cast<int>(jobs.size());
  const auto& o = config.options;
  double gpu_ms = 0;
  for (const auto& r : results) {
    if (!r) {
      std::cerr << "could not evaluate: " << r.error().message << "\n";
      continue;
    }
    if (r->correct) ++run.n_correct;
    if (!r->correct) std::cerr << r->candidate << ": " << common::to_string(r->status) << " " << r->error.message << "\n";
    gpu_ms += own_gpu_ms(*r, o);
    for (const auto& [phase, ms] : r->phases_ms) run.phase_ms[phase].push_back(ms);
    run.latency_beyond_gpu_ms.push_back(latency_beyond_gpu_ms(*r, o));
  }
  run.gpu_ms_per_candidate = run.n ? gpu_ms / run.n : 0;
  return run;
}

double median(std::vector<double> v) { return eval::summarize(std::move(v)).median; }

// Prints each row as soon as it is measured (a run cut short still shows them), then the table.
class Report {
 public:
  void add(std::vector<std::string> row) {
    std::string line;
    for (const auto& cell : row) line += cell + " | ";
    std::printf("row: %s\n", line.c_str());
    std::fflush(stdout);
    table_.add_row(std::move(row));
  }
  std::string render() const { return table_.render(); }

 private:
  common::Table table_{{"benchmark", "value", "baseline", "ratio", "target"}};
};

// 1. Cold compile and cache hit, one candidate at a time, uncontended. The engine's pipeline (nvcc's
// front ends side by side, host compile against cached precompiled headers) against nvcc run as
// is and each change alone, interleaved per candidate, each pipeline with its own cache.
void bench_compile(const std::vector<eval::BatchEntry>& native, const fs::path& scratch, Report& report) {
  auto toolchain = compile::detect_toolchain();
  if (!toolchain) {
    std::cerr << toolchain.error().message << "\n";
    return;
  }
  struct Pipeline {
    const char* name;
    bool host_pch, parallel_nvcc;
    std::vector<double> cold_ms;
  };
  std::vector<Pipeline> pipelines{{"nvcc as is", false, false, {}},
                                  {"+ host precompiled headers", true, false, {}},
                                  {"+ front ends side by side", false, true, {}},
                                  {"engine (both)", true, true, {}}};
  std::vector<compile::Compiler> compilers;
  for (std::size_t p = 0; p < pipelines.size(); ++p) compilers.emplace_back(*toolchain, scratch / ("compile-seq-" + std::to_string(p)));
  compile::CompileOptions options;
  options.format = common::Format::NATIVE;
  if (const char* arch = std::getenv("KERNELRL_ARCH")) options.cuda_arch = arch;
  std::vector<double> hit_ms;
  double first_ms = 0;
  const std::size_t n = std::min<std::size_t>(native.size(), 20);
  for (std::size_t i = 0; i < n; ++i) {
    auto source = common::read_file(native[i].job.candidate);
    if (!source) continue;
    auto name = native[i].job.candidate.filename().string();
    for (std::size_t p = 0; p < pipelines.size(); ++p) {
      options.host_pch = pipelines[p].host_pch;
      options.parallel_nvcc = pipelines[p].parallel_nvcc;
      auto cold = compilers[p].compile(*source, name, options);
      if (cold.status != common::Status::OK) std::cerr << name << ": " << cold.message << "\n" << cold.log_excerpt << "\n";
      if (i == 0 && p + 1 == pipelines.size()) {
        first_ms = cold.t_compile_ms;  // builds the precompiled header: not in the median
        if (!cold.pipeline_note.empty()) std::printf("engine pipeline: %s\n", cold.pipeline_note.c_str());
      } else {
        pipelines[p].cold_ms.push_back(cold.t_compile_ms);
      }
      if (p + 1 == pipelines.size()) hit_ms.push_back(compilers[p].compile(*source, name, options).t_compile_ms);
    }
  }
  const double base = median(pipelines[0].cold_ms);
  for (const auto& p : pipelines) {
    const bool engine = &p == &pipelines.back();
    report.add({std::string("cold compile, native, ") + p.name + " (median ms, n=" + std::to_string(p.cold_ms.size()) + ")",
                fmt(median(p.cold_ms)), engine || &p != &pipelines[0] ? fmt(base) : "-",
                &p == &pipelines[0] ? "-" : fmt(median(p.cold_ms) / base, 3), engine ? "<= 500" : "-"});
  }
  report.add({"  first engine compile (also builds the precompiled header; ms)", fmt(first_ms), "-", "-", "-"});
  report.add({"cache hit (median ms)", fmt(median(hit_ms), 2), fmt(median(pipelines.back().cold_ms)),
              fmt(median(pipelines.back().cold_ms) / median(hit_ms), 0) + "x", "<= 10"});
}

// 2-. Before the batches are measured: a few candidates through an engine with its own cache, so
// the first measured batch does not also pay for a cold machine (page cache of the toolkit, the
// GPU's first contexts). Suspected from earlier runs: the defended batch, always measured first,
// swung between 127 and 158 candidates/min while the undefended one after it stayed at 174-196.
void warm_up(const fs::path& dir, const fs::path& scratch, const eval::EngineConfig& base) {
  BatchRun run = run_batch(dir / "native.json", scratch / "cache-warm-up", base, 8);
  std::printf("warm-up: %d candidates in %.1f s (not measured)\n", run.n, run.wall_s);
}

// 2a. The native batch; returns candidates per minute.
double bench_native_batch(const fs::path& dir, const fs::path& scratch, const eval::EngineConfig& base, Report& report) {
  BatchRun run = run_batch(dir / "native.json", scratch / "cache-native", base);
  if (run.n == 0) return 0;
  double per_min = run.n / run.wall_s * 60;
  report.add({"native batch: candidates/min (n=" + std::to_string(run.n) + ", correct " + std::to_string(run.n_correct) + ")",
              fmt(per_min), "-", "-", "-"});
  report.add({"  per-candidate overhead beyond GPU time, batch wall / n (ms)",
              fmt(run.wall_s * 1000 / run.n - run.gpu_ms_per_candidate), "-", "-", "<= 1000"});
  report.add({"  per-candidate latency beyond GPU time, median compile + child (ms)", fmt(median(run.latency_beyond_gpu_ms)),
              "-", "-", "<= 1000"});
  std::string phases, steps;
  for (const auto& [name, ms] : run.phase_ms) {
    std::string& line = name.find('.') == std::string::npos ? phases : steps;
    line += std::string(line.empty() ? "" : " ") + name + "=" + fmt(median(ms));
  }
  report.add({"  median phases (ms)", phases, "-", "-", "-"});
  report.add({"  median steps inside the phases (ms, summed over trials or calls)", steps, "-", "-", "-"});
  return per_min;
}

// 2a''. The same native batch, fresh cache, with nvcc run as is (the compile pipeline before
// compile/nvcc_steps and compile/host_pch), with 1, 2 and 8 evaluation workers, and with 2 children
// forked ahead per worker.
void bench_native_variants(const fs::path& dir, const fs::path& scratch, const eval::EngineConfig& base,
                           double default_per_min, Report& report) {
  eval::EngineConfig as_is = base;
  as_is.fast_native_compile = false;
  eval::EngineConfig one_worker = base, two_workers = base, more_workers = base, two_warm = base, two_by_two = base;
  one_worker.n_workers = 1;
  two_workers.n_workers = 2;
  more_workers.n_workers = 8;
  two_warm.warm_children = 2;
  two_by_two.n_workers = 2;
  two_by_two.warm_children = 2;
  const std::pair<const char*, eval::EngineConfig*> variants[] = {
      {"nvcc as is", &as_is},          {"1 worker", &one_worker},
      {"2 workers", &two_workers},     {"8 workers", &more_workers},
      {"2 warm children per worker", &two_warm}, {"2 workers, 2 warm children each", &two_by_two}};
  for (std::size_t i = 0; i < std::size(variants); ++i) {
    BatchRun run = run_batch(dir / "native.json", scratch / ("cache-native-variant-" + std::to_string(i)), *variants[i].second);
    if (run.n == 0 || default_per_min <= 0) continue;
    const double per_min = run.n / run.wall_s * 60;
    std::string phases;
    for (const char* p : {"compile", "device_prepare", "device_wait", "lock_wait", "correctness", "timing", "child_total"}) {
      if (run.phase_ms.count(p)) phases += std::string(" ") + p + "=" + fmt(median(run.phase_ms.at(p)));
    }
    report.add({std::string("  native batch, ") + variants[i].first + ": candidates/min (median ms:" + phases + ")", fmt(per_min),
                fmt(default_per_min), fmt(per_min / default_per_min, 3) + "x", "-"});
  }
}

// 2a'. The same native batch with the candidates in the evaluating child (defenses on), then with
// the defenses off (EvalOptions::defenses, which also keeps candidates in the child), each with a
// fresh cache like the defended run: what the candidate's own process costs, and what all the
// defenses cost together (that process, the sandbox, the input and output checks, the per-call
// input redraw, the recheck after timing and the roofline re-measure) in throughput.
void bench_defense_cost(const fs::path& dir, const fs::path& scratch, const eval::EngineConfig& base,
                        double defended_per_min, Report& report) {
  eval::EngineConfig in_child = base;
  in_child.options.native_candidate_process = false;
  BatchRun beside = run_batch(dir / "native.json", scratch / "cache-native-in-child", in_child);
  if (beside.n > 0 && defended_per_min > 0) {
    const double per_min = beside.n / beside.wall_s * 60;
    report.add({"  candidates in the child (defenses on): candidates/min (n=" + std::to_string(beside.n) + ")", fmt(per_min),
                fmt(defended_per_min), fmt(defended_per_min / per_min, 3) + "x", "-"});
  }
  eval::EngineConfig config = base;
  config.options.defenses = false;
  BatchRun run = run_batch(dir / "native.json", scratch / "cache-native-undefended", config);
  if (run.n == 0 || defended_per_min <= 0) return;
  const double per_min = run.n / run.wall_s * 60;
  report.add({"  without defenses: candidates/min (n=" + std::to_string(run.n) + ")", fmt(per_min), "-", "-", "-"});
  report.add({"  cost of the defenses: throughput lost (%)", fmt((1 - defended_per_min / per_min) * 100, 1),
              fmt(defended_per_min), fmt(defended_per_min / per_min, 3) + "x", "<= 15"});
}

// 2b. The same kernels through load_inline, and the ratio.
void bench_kernelbench_batch(const fs::path& dir, const fs::path& scratch, const eval::EngineConfig& base,
                             double native_per_min, Report& report) {
  BatchRun run = run_batch(dir / "kernelbench.json", scratch / "cache-kernelbench", base);
  if (run.n == 0) return;
  double per_min = run.n / run.wall_s * 60;
  report.add({"kernelbench batch: candidates/min (n=" + std::to_string(run.n) + ", correct " + std::to_string(run.n_correct) + ")",
              fmt(per_min, 2), "-", "-", "-"});
  if (native_per_min > 0) {
    report.add({"native vs kernelbench throughput", fmt(native_per_min), fmt(per_min, 2), fmt(native_per_min / per_min) + "x",
                ">= 20x"});
  }
}

// 2c. One candidate on an idle engine (worker warm, task reference already timed, its own
// compile cold): compile + child time beyond the kernels' own GPU time, the latency a single
// evaluation pays without queueing behind a batch.
void bench_single_latency(const std::vector<eval::BatchEntry>& native, const fs::path& scratch,
                          const eval::EngineConfig& base, Report& report) {
  if (native.size() < 2) return;
  eval::EngineConfig config = base;
  config.cache_dir = scratch / "cache-single";
  auto engine = eval::Engine::create(config);
  if (!engine) {
    std::cerr << "engine: " << engine.error().message << "\n";
    return;
  }
  (void)(*engine)->evaluate(native[0].job);  // warms the worker and times the task's reference
  std::vector<double> beyond_gpu_ms;
  for (std::size_t i = 1; i < std::min<std::size_t>(native.size(), 6); ++i) {
    auto r = (*engine)->evaluate(native[i].job);
    if (r && r->correct) beyond_gpu_ms.push_back(latency_beyond_gpu_ms(*r, config.options));
  }
  report.add({"single candidate, idle engine: compile + child beyond GPU time (median ms, n=" +
                  std::to_string(beyond_gpu_ms.size()) + ")",
              fmt(median(beyond_gpu_ms)), "-", "-", "<= 1000"});
}

// 3. The same kernel evaluated 5 times, the reference re-timed each time.
void bench_fidelity(const std::string& task, const std::string& candidate, const fs::path& scratch,
                    const eval::EngineConfig& base, Report& report) {
  eval::EngineConfig config = base;
  config.cache_dir = scratch / "cache-fidelity";
  config.reuse_ref_timing = false;
  auto engine = eval::Engine::create(config);
  if (!engine) {
    std::cerr << "engine: " << engine.error().message << "\n";
    return;
  }
  std::vector<double> speedups;
  for (int i = 0; i < 5; ++i) {
    auto r = (*engine)->evaluate(eval::EvalJob{task, candidate, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
    if (!r || !r->correct) {
      std::cerr << "fidelity run failed: " << (r ? r->error.message : r.error().message) << "\n";
      continue;
    }
    speedups.push_back(r->speedup);
    std::printf("fidelity run %d: runtime %.2f us, reference %.2f us, speedup %.4f\n", i, r->runtime_us,
                r->ref_runtime_us, r->speedup);
  }
  if (speedups.empty()) return;
  auto [lo, hi] = std::minmax_element(speedups.begin(), speedups.end());
  report.add({"fidelity: speedup spread over " + std::to_string(speedups.size()) + " evals (max/min-1, %)",
              fmt((*hi / *lo - 1) * 100, 2), "-", "-", "<= 2"});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kernelrl_bench CANDIDATE_DIR [--skip-kernelbench | --only-kernelbench | --compile-only | --native-batch-only]"
                 " [--fidelity-task T --fidelity-candidate C] [--native-per-min X]\n";
    return 64;
  }
  fs::path dir = argv[1];
  bool skip_kb = false, only_kb = false, compile_only = false, batch_only = false;
  std::string fid_task, fid_cand;
  double native_per_min = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--skip-kernelbench") skip_kb = true;
    if (a == "--only-kernelbench") only_kb = true;
    if (a == "--compile-only") compile_only = true;  // no GPU needed
    if (a == "--native-batch-only") batch_only = true;  // the native batch, the defenses' cost and the batch's variants
    if (a == "--fidelity-task" && i + 1 < argc) fid_task = argv[++i];
    if (a == "--native-per-min" && i + 1 < argc) native_per_min = std::atof(argv[++i]);  // measured earlier in the same run
    if (a == "--fidelity-candidate" && i + 1 < argc) fid_cand = argv[++i];
  }
  auto scratch = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-bench-");
  if (!scratch) {
    std::cerr << scratch.error().message << "\n";
    return 2;
  }
  auto native = eval::read_batch_file(dir / "native.json");
  if (!native) {
    std::cerr << native.error().message << "\n";
    return 2;
  }
  Report report;
  const eval::EngineConfig base = engine_config(*scratch);
  if (batch_only) {
    warm_up(dir, *scratch, base);
    native_per_min = bench_native_batch(dir, *scratch, base, report);
    bench_defense_cost(dir, *scratch, base, native_per_min, report);
    bench_native_variants(dir, *scratch, base, native_per_min, report);
    std::cout << "\n" << report.render();
    return 0;
  }
  if (!only_kb) {
    bench_compile(*native, *scratch, report);
    if (compile_only) {
      std::cout << "\n" << report.render();
      return 0;
    }
    warm_up(dir, *scratch, base);
    native_per_min = bench_native_batch(dir, *scratch, base, report);
    bench_defense_cost(dir, *scratch, base, native_per_min, report);
    bench_single_latency(*native, *scratch, base, report);
  }
  if (!skip_kb) bench_kernelbench_batch(dir, *scratch, base, native_per_min, report);
  if (!fid_task.empty() && !only_kb) bench_fidelity(fid_task, fid_cand, *scratch, base, report);
  std::cout << "\n" << report.render();
  std::error_code ec;
  fs::remove_all(*scratch, ec);
  return 0;
}
