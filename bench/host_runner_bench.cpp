// What running host candidates in a process of their own (eval/host_runner.hpp) costs, measured in
// one run on this machine (CPU only):
//   1. one call's round trip between two processes: the shared-page doorbells against a Unix
//      socket pair (the usual way), median of many ping-pongs;
//   2. a host candidate evaluated with the separate process and in the evaluating child, the two
//      alternating: the candidate's median runtime (what the timer adds), the speedup and the
//      whole evaluation's wall time, as ratios.
// usage: kernelrl_host_runner_bench [--task T --candidate C] [--evals N] [--pings N]
// Defaults: the CI ladder's small softmax task and its correct candidate (a ~10 us kernel, where
// a round trip shows most), 6 evaluations of each kind, 20,000 ping-pongs.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "common/table.hpp"
#include "bench_util.hpp"
#include "eval/engine.hpp"
#include "eval/stats.hpp"
#include "sandbox/shared_pages.hpp"

using namespace kernelrl;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

using bench::fmt;
using bench::self_dir;

double us_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

// Round trips through two doorbells in shared pages, the way the engine hands a timed call over:
// the other side spins for the request, this side spins for the answer. Median microseconds.
double doorbell_round_trip_us(int n) {
  auto pages = sandbox::SharedPages::create(4096);
  if (!pages) throw std::runtime_error(pages.error().message);
  auto* bells = new (pages->data()) sandbox::Doorbell[2];
  pid_t pid = ::fork();
  if (pid == 0) {
    for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(n); ++i) {
      bells[0].wait_for(i, 1000ms, 100ms, {});
      bells[1].ring(i);
    }
    _exit(0);
  }
  std::vector<double> us;
  for (std::uint32_t i = 1; i <= static_cast<std::uint32_t>(n); ++i) {
    auto t0 = clock_type::now();
    bells[0].ring(i);
    bells[1].wait_for(i, 5ms, 100ms, {});
    us.push_back(us_since(t0));
  }
  ::waitpid(pid, nullptr, 0);
  return eval::summarize(us).median;
}

// The same over a Unix socket pair: one byte each way, blocking reads.
double socket_round_trip_us(int n) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) throw std::runtime_error("socketpair failed");
  pid_t pid = ::fork();
  char b = 0;
  if (pid == 0) {
    for (int i = 0; i < n; ++i) {
      if (::read(sv[1], &b, 1) != 1 || ::write(sv[1], &b, 1) != 1) _exit(1);
    }
    _exit(0);
  }
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    auto t0 = clock_type::now();
    if (::write(sv[0], &b, 1) != 1 || ::read(sv[0], &b, 1) != 1) break;
    us.push_back(us_since(t0));
  }
  ::waitpid(pid, nullptr, 0);
  ::close(sv[0]);
  ::close(sv[1]);
  return eval::summarize(us).median;
}

struct Evals {
  std::vector<double> runtime_us, speedup, total_ms;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string src = fs::path(self_dir()).parent_path().parent_path().string();
  std::string task = src + "/tests/ladder/task_softmax_small.py";
  std::string candidate = src + "/tests/ladder/host/correct.cpp";
  int n_evals = 6, n_pings = 20000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--task" && i + 1 < argc) task = argv[++i];
    else if (a == "--candidate" && i + 1 < argc) candidate = argv[++i];
    else if (a == "--evals" && i + 1 < argc) n_evals = std::atoi(argv[++i]);
    else if (a == "--pings" && i + 1 < argc) n_pings = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: kernelrl_host_runner_bench [--task T --candidate C] [--evals N] [--pings N]\n";
      return 2;
    }
  }
  common::Table table({"what", "separate process", "baseline", "ratio"});
  const double bell = doorbell_round_trip_us(n_pings), sock = socket_round_trip_us(n_pings);
  table.add_row({"round trip, median us (baseline: socket pair)", fmt(bell, 2), fmt(sock, 2), fmt(bell / sock, 2) + "x"});
  std::cout << table.render() << std::flush;

  const fs::path cache = fs::temp_directory_path() / ("kernelrl-host-runner-bench-" + std::to_string(::getpid()));
  std::vector<std::unique_ptr<eval::Engine>> engines;
  for (bool separate : {true, false}) {
    eval::EngineConfig c;
    c.worker_binary = self_dir() + "/../tools/kernelrl/kernelrl";
    c.cache_dir = cache;
    c.options.device = "cpu";
    c.options.separate_process = separate;
    c.reuse_ref_timing = false;  // each evaluation times its reference beside the candidate
    auto e = eval::Engine::create(c);
    if (!e) {
      std::cerr << e.error().message << "\n";
      return 1;
    }
    engines.push_back(std::move(*e));
  }
  Evals runs[2];
  for (int i = 0; i < n_evals + 1; ++i) {  // the first of each is a warm-up (compile, caches)
    for (int k = 0; k < 2; ++k) {
      auto r = engines[static_cast<std::size_t>(k)]->evaluate({task, candidate, std::nullopt, std::nullopt});
      if (!r || r->status != common::Status::OK) {
        std::cerr << "evaluation failed: " << (r ? r->error.message : r.error().message) << "\n";
        return 1;
      }
      if (i == 0) continue;
      runs[k].runtime_us.push_back(r->runtime_us);
      runs[k].speedup.push_back(r->speedup);
      runs[k].total_ms.push_back(r->phases_ms["total"]);
    }
  }
  fs::remove_all(cache);
  const auto med = [](const std::vector<double>& v) { return eval::summarize(v).median; };
  const std::string n = " (median of " + std::to_string(n_evals) + ")";
  table.add_row({"candidate runtime, us" + n + " (baseline: in the child)", fmt(med(runs[0].runtime_us), 2),
                 fmt(med(runs[1].runtime_us), 2), fmt(med(runs[0].runtime_us) / med(runs[1].runtime_us), 3) + "x"});
  table.add_row({"speedup" + n, fmt(med(runs[0].speedup), 3), fmt(med(runs[1].speedup), 3),
                 fmt(med(runs[0].speedup) / med(runs[1].speedup), 3) + "x"});
  table.add_row({"whole evaluation, ms" + n, fmt(med(runs[0].total_ms), 0), fmt(med(runs[1].total_ms), 0),
                 fmt(med(runs[0].total_ms) / med(runs[1].total_ms), 3) + "x"});
  std::cout << "\n" << table.render();
  std::cout << "task " << task << ", candidate " << candidate << "\n";
  return 0;
}
