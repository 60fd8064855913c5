// Benchmarks of the evaluation engine, all measured in one run on this machine:
//   1. cold compile and cache hit per native candidate (sequential, uncontended)
//   2. throughput of a batch through the native path vs the same kernels through the kernelbench
//      (load_inline) path, as a ratio; per-candidate overhead beyond the kernels' own GPU time
//   3. timing fidelity: one kernel evaluated 5 times (reference re-timed each time)
// usage: kernelrl_bench CANDIDATE_DIR [--skip-kernelbench | --only-kernelbench]
//                       [--fidelity-task T --fidelity-candidate C]
// Each row is printed as soon as it is measured, and the whole table at the end.
// CANDIDATE_DIR comes from bench/make_candidates.py (native.json, kernelbench.json).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/fs.hpp"
#include "common/table.hpp"
#include "compile/compiler.hpp"
#include "eval/batch_file.hpp"
#include "eval/engine.hpp"
#include "eval/stats.hpp"

using namespace kernelrl;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

namespace {

std::string self_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return fs::path(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0)).parent_path().string();
}

std::string fmt(double v, int digits = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

eval::EngineConfig engine_config(const fs::path& cache) {
  eval::EngineConfig c;
  c.worker_binary = self_dir() + "/../tools/kernelrl/kernelrl";
  c.cache_dir = cache;
  return c;
}

struct BatchRun {
  int n = 0, n_correct = 0;
  double wall_s = 0;
  double gpu_ms_per_candidate = 0;  // the kernels' own time: every candidate and reference call
  std::vector<double> setup_ms, load_ms, correctness_ms, timing_ms;
};

BatchRun run_batch(const fs::path& batch, const fs::path& cache, const eval::EngineConfig& base) {
  BatchRun run;
  auto entries = eval::read_batch_file(batch);
  if (!entries) {
    std::cerr << entries.error().message << "\n";
    return run;
  }
  std::vector<eval::EvalJob> jobs;
  for (auto& e : *entries) jobs.push_back(e.job);
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
    double cand_calls = o.n_trials + o.n_warmup + r->runtime.n;
    gpu_ms += cand_calls * r->runtime.mean_us / 1000.0;
    double ref_calls = o.n_trials + 1 + (r->phases_ms.count("ref_timing") ? o.n_warmup + r->ref_runtime.n : 0);
    gpu_ms += ref_calls * r->ref_runtime.mean_us / 1000.0;
    auto get = [&](const char* k) { return r->phases_ms.count(k) ? r->phases_ms.at(k) : 0.0; };
    run.setup_ms.push_back(get("setup"));
    run.load_ms.push_back(get("load"));
    run.correctness_ms.push_back(get("correctness"));
    run.timing_ms.push_back(get("timing"));
  }
  run.gpu_ms_per_candidate = run.n ? gpu_ms / run.n : 0;
  return run;
}

double median(std::vector<double> v) { return eval::summarize(std::move(v)).median; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kernelrl_bench CANDIDATE_DIR [--skip-kernelbench] [--fidelity-task T --fidelity-candidate C]\n";
    return 64;
  }
  fs::path dir = argv[1];
  bool skip_kb = false, only_kb = false;
  std::string fid_task, fid_cand;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--skip-kernelbench") skip_kb = true;
    if (a == "--only-kernelbench") only_kb = true;
    if (a == "--fidelity-task" && i + 1 < argc) fid_task = argv[++i];
    if (a == "--fidelity-candidate" && i + 1 < argc) fid_cand = argv[++i];
  }
  auto scratch = common::make_temp_dir(fs::temp_directory_path(), "kernelrl-bench-");
  if (!scratch) {
    std::cerr << scratch.error().message << "\n";
    return 2;
  }
  common::Table table({"benchmark", "value", "baseline", "ratio", "target"});
  auto add = [&](std::vector<std::string> row) {
    std::string line;
    for (const auto& cell : row) line += cell + " | ";
    std::printf("row: %s\n", line.c_str());
    std::fflush(stdout);
    table.add_row(std::move(row));
  };

  // 1. Cold compile and cache hit, one candidate at a time.
  auto toolchain = compile::detect_toolchain();
  if (!toolchain) {
    std::cerr << toolchain.error().message << "\n";
    return 2;
  }
  compile::Compiler compiler(*toolchain, *scratch / "compile-seq");
  eval::EngineConfig base = engine_config(*scratch);
  double nat_per_min = 0;
  if (!only_kb) {
  auto native = eval::read_batch_file(dir / "native.json");
  if (!native) {
    std::cerr << native.error().message << "\n";
    return 2;
  }
  std::vector<double> cold_ms, hit_ms;
  compile::CompileOptions copts;
  copts.format = common::Format::NATIVE;
  if (const char* arch = std::getenv("KERNELRL_ARCH")) copts.cuda_arch = arch;
  std::size_t n_seq = std::min<std::size_t>(native->size(), 20);
  for (std::size_t i = 0; i < n_seq; ++i) {
    auto src = common::read_file((*native)[i].job.candidate);
    auto name = (*native)[i].job.candidate.filename().string();
    auto cold = compiler.compile(*src, name, copts);
    auto hit = compiler.compile(*src, name, copts);
    if (cold.status != common::Status::OK) std::cerr << name << ": " << cold.message << "\n" << cold.log_excerpt << "\n";
    cold_ms.push_back(cold.t_compile_ms);
    hit_ms.push_back(hit.t_compile_ms);
  }
  add({"cold compile, native (median ms, n=" + std::to_string(n_seq) + ")", fmt(median(cold_ms)), "-", "-", "<= 500"});
  add({"cache hit (median ms)", fmt(median(hit_ms), 2), fmt(median(cold_ms)), fmt(median(cold_ms) / median(hit_ms), 0) + "x", "<= 10"});

  // 2. Batch throughput, native vs kernelbench, each with a cold cache.
  BatchRun nat = run_batch(dir / "native.json", *scratch / "cache-native", base);
  nat_per_min = nat.n / nat.wall_s * 60;
  double overhead_ms = nat.wall_s * 1000 / nat.n - nat.gpu_ms_per_candidate;
  add({"native batch: candidates/min (n=" + std::to_string(nat.n) + ", correct " + std::to_string(nat.n_correct) + ")",
                 fmt(nat_per_min), "-", "-", "-"});
  add({"  per-candidate overhead beyond GPU time (ms)", fmt(overhead_ms), "-", "-", "<= 1000"});
  add({"  median child phases setup/load/check/timing (ms)",
                 fmt(median(nat.setup_ms)) + "/" + fmt(median(nat.load_ms)) + "/" + fmt(median(nat.correctness_ms)) + "/" +
                     fmt(median(nat.timing_ms)),
                 "-", "-", "-"});
  }
  if (!skip_kb) {
    BatchRun kb = run_batch(dir / "kernelbench.json", *scratch / "cache-kernelbench", base);
    double kb_per_min = kb.n / kb.wall_s * 60;
    add({"kernelbench batch: candidates/min (n=" + std::to_string(kb.n) + ", correct " + std::to_string(kb.n_correct) + ")",
                   fmt(kb_per_min, 2), "-", "-", "-"});
    if (nat_per_min > 0) {
      add({"native vs kernelbench throughput", fmt(nat_per_min), fmt(kb_per_min, 2), fmt(nat_per_min / kb_per_min) + "x", ">= 20x"});
    }
  }

  // 3. Timing fidelity: the same kernel 5 times, the reference re-timed each time.
  if (!fid_task.empty() && !only_kb) {
    eval::EngineConfig fc = base;
    fc.cache_dir = *scratch / "cache-fidelity";
    fc.reuse_ref_timing = false;
    auto engine = eval::Engine::create(fc);
    std::vector<double> speedups, refs;
    for (int i = 0; engine && i < 5; ++i) {
      auto r = (*engine)->evaluate({fid_task, fid_cand, std::nullopt});
      if (r && r->correct) {
        speedups.push_back(r->speedup);
        refs.push_back(r->ref_runtime_us);
        std::printf("fidelity run %d: runtime %.2f us, reference %.2f us, speedup %.4f\n", i, r->runtime_us,
                    r->ref_runtime_us, r->speedup);
      } else {
        std::cerr << "fidelity run failed: " << (r ? r->error.message : r.error().message) << "\n";
      }
    }
    if (!speedups.empty()) {
      auto [lo, hi] = std::minmax_element(speedups.begin(), speedups.end());
      add({"fidelity: speedup spread over 5 evals (max/min-1, %)", fmt((*hi / *lo - 1) * 100, 2), "-", "-", "<= 2"});
      std::printf("fidelity: reference median over the 5 runs %.2f us\n", median(refs));
    }
  }
  std::cout << "\n" << table.render();
  std::error_code ec;
  fs::remove_all(*scratch, ec);
  return 0;
}
