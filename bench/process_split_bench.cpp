// What a GPU candidate in a process of its own would cost (docs/security.md, "Design"): the
// building blocks measured on the machine before the engine is built on them.
//
// The parent plays the evaluating child, a forked "runner" the candidate's process. The runner is
// forked before either touches CUDA (a process forked after CUDA is initialised cannot use it); the
// parent allocates an arena with cudaMalloc and exports it (cudaIpcGetMemHandle) through pages both
// share; the runner opens it in its own context and then serves calls, one doorbell each way, as
// eval/host_runner.hpp does for host candidates. A "call" is a device-to-device copy of N bytes
// inside the arena (a memory-bound kernel of known size), made on the runner's stream and
// synchronised there before the runner answers.
//
// Printed, each against its baseline measured in the same run:
//   - context creation: the runner's and the parent's cudaFree(0), made at the same time, and
//     cudaIpcOpenMemHandle in the runner;
//   - per call: the same copy timed in the parent's own context (events around it: today's timing)
//     against the round trip through the runner (events on the parent's idle stream around the
//     doorbell and the answer, and the host clock): medians over the calls, their ratio and the
//     difference in microseconds;
//   - faults: the runner calls cudaDeviceReset; the parent's context, its arena and a copy after it
//     are checked intact;
//   - the runner's thread count after CUDA set itself up (what a thread rule must allow).
// Needs a GPU; without one it says so and exits 0.
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

enum Op : int { kCall = 1, kReset = 2, kQuit = 3 };

// The pages both processes share: written by one side, read by the other.
struct Shared {
  std::atomic<int> handle_ready{0};
  cudaIpcMemHandle_t handle{};
  std::atomic<std::uint64_t> doorbell{0};  // parent: sequence number of the call it asks for
  std::atomic<std::uint64_t> answer{0};    // runner: sequence number of the call it finished
  std::atomic<int> op{0};
  std::size_t bytes = 0;                   // of the copy a call makes
  int error = 0;                           // the runner's last cudaError_t
  double runner_init_ms = 0;
  double runner_open_ms = 0;
  int runner_threads = 0;
  char message[160] = {};
};

double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

void spin_until(const std::atomic<std::uint64_t>& word, std::uint64_t value) {
  while (word.load(std::memory_order_acquire) < value) {
  }
}

// The runner: its own context, the parent's arena mapped, then calls until told to quit.
[[noreturn]] void run_runner(Shared* sh) {
  auto t0 = clock_type::now();
  cudaError_t e = cudaFree(nullptr);
  sh->runner_init_ms = ms_between(t0, clock_type::now());
  sh->runner_threads = thread_count();
  while (sh->handle_ready.load(std::memory_order_acquire) == 0) {
  }
  void* base = nullptr;
  t0 = clock_type::now();
  if (e == cudaSuccess) e = cudaIpcOpenMemHandle(&base, sh->handle, cudaIpcMemLazyEnablePeerAccess);
  sh->runner_open_ms = ms_between(t0, clock_type::now());
  cudaStream_t stream = nullptr;
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  sh->error = e;
  if (e != cudaSuccess) std::snprintf(sh->message, sizeof sh->message, "runner set-up: %s", cudaGetErrorString(e));
  std::uint64_t served = 0;
  for (;;) {
    spin_until(sh->doorbell, served + 1);
    ++served;
    const int op = sh->op.load(std::memory_order_acquire);
    if (op == kQuit) {
      sh->answer.store(served, std::memory_order_release);
      _exit(0);
    }
    if (op == kReset) {
      e = cudaDeviceReset();
    } else if (sh->error == cudaSuccess) {
      auto* bytes = static_cast<char*>(base);
      e = cudaMemcpyAsync(bytes + sh->bytes, bytes, sh->bytes, cudaMemcpyDeviceToDevice, stream);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();  // all of the runner's work is inside the call
    }
    if (e != cudaSuccess) sh->error = e;
    sh->answer.store(served, std::memory_order_release);
  }
}

struct Parent {
  Shared* sh = nullptr;
  std::uint64_t calls = 0;

  // One call through the runner; false when it reported an error.
  bool ring(Op op, std::size_t bytes) {
    sh->op.store(op, std::memory_order_relaxed);
    sh->bytes = bytes;
    sh->doorbell.store(++calls, std::memory_order_release);
    spin_until(sh->answer, calls);
    return sh->error == cudaSuccess;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::printf("FAILED %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(5, std::atoi(argv[1])) : 200;
  const std::vector<std::size_t> sizes = {0, 1 << 16, 1 << 20, 16 << 20, 256 << 20};
  const std::size_t max_bytes = sizes.back();

  void* pages = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* sh = new (pages) Shared();
  const pid_t runner = fork();  // before this process touches CUDA
  if (runner < 0) {
    std::perror("fork");
    return 1;
  }
  if (runner == 0) run_runner(sh);

  auto t0 = clock_type::now();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("process_split_bench: no CUDA device here; nothing measured\n");
    kill(runner, SIGKILL);
    waitpid(runner, nullptr, 0);
    return 0;
  }
  bool ok = check(cudaFree(nullptr), "cudaFree(0)");
  const double parent_init_ms = ms_between(t0, clock_type::now());
  char* arena = nullptr;
  char* own = nullptr;  // the parent's private buffer for the in-process baseline
  ok = ok && check(cudaMalloc(&arena, 2 * max_bytes), "cudaMalloc arena");
  ok = ok && check(cudaMalloc(&own, 2 * max_bytes), "cudaMalloc own");
  ok = ok && check(cudaMemset(arena, 0x5a, 2 * max_bytes), "memset") && check(cudaMemset(own, 0x5a, 2 * max_bytes), "memset");
  ok = ok && check(cudaIpcGetMemHandle(&sh->handle, arena), "cudaIpcGetMemHandle");
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  ok = ok && check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") &&
       check(cudaEventCreate(&start), "event") && check(cudaEventCreate(&end), "event");
  if (!ok) return 1;
  sh->handle_ready.store(1, std::memory_order_release);
  Parent parent{sh};
  if (!parent.ring(kCall, 0)) {  // waits for the runner's set-up
    std::printf("FAILED runner: %s\n", sh->message);
    return 1;
  }
  std::printf("context creation, two processes at once: parent %.1f ms, runner %.1f ms; runner's "
              "cudaIpcOpenMemHandle %.3f ms; runner threads after cudaFree(0): %d\n",
              parent_init_ms, sh->runner_init_ms, sh->runner_open_ms, sh->runner_threads);

  std::printf("%-10s %12s %12s %8s %10s %12s %12s\n", "bytes", "in-proc us", "runner us", "ratio", "diff us",
              "host in us", "host run us");
  for (std::size_t bytes : sizes) {
    std::vector<double> in_ev, run_ev, in_host, run_host;
    for (int r = 0; r < reps + 5; ++r) {
      float ms = 0;
      // Baseline: the copy in the parent's own context, timed as today's engine times a call.
      auto h0 = clock_type::now();
      cudaEventRecord(start, stream);
      cudaMemcpyAsync(own + bytes, own, bytes, cudaMemcpyDeviceToDevice, stream);
      cudaEventRecord(end, stream);
      cudaEventSynchronize(end);
      auto h1 = clock_type::now();
      cudaEventElapsedTime(&ms, start, end);
      if (r >= 5) in_ev.push_back(1000.0 * ms), in_host.push_back(1000.0 * ms_between(h0, h1));
      // The same copy made by the runner: events on the parent's idle stream around the round trip.
      h0 = clock_type::now();
      cudaEventRecord(start, stream);
      if (!parent.ring(kCall, bytes)) {
        std::printf("FAILED runner call: %s\n", cudaGetErrorString(static_cast<cudaError_t>(sh->error)));
        return 1;
      }
      cudaEventRecord(end, stream);
      cudaEventSynchronize(end);
      h1 = clock_type::now();
      cudaEventElapsedTime(&ms, start, end);
      if (r >= 5) run_ev.push_back(1000.0 * ms), run_host.push_back(1000.0 * ms_between(h0, h1));
    }
    const double a = median(in_ev), b = median(run_ev);
    std::printf("%-10zu %12.2f %12.2f %8.3f %10.2f %12.2f %12.2f\n", bytes, a, b, a > 0 ? b / a : 0.0, b - a,
                median(in_host), median(run_host));
  }

  // A runner that resets its device: the parent's context and arena must be untouched.
  std::vector<unsigned char> before(4096), after(4096);
  ok = check(cudaMemcpy(before.data(), arena, before.size(), cudaMemcpyDeviceToHost), "read arena");
  parent.ring(kReset, 0);
  const int reset_error = sh->error;
  cudaError_t after_copy = cudaMemcpyAsync(own + 4096, own, 4096, cudaMemcpyDeviceToDevice, stream);
  if (after_copy == cudaSuccess) after_copy = cudaStreamSynchronize(stream);
  ok = ok && check(cudaMemcpy(after.data(), arena, after.size(), cudaMemcpyDeviceToHost), "read arena after");
  std::printf("runner's cudaDeviceReset: returned '%s'; parent's copy after it: %s; parent's arena %s\n",
              cudaGetErrorString(static_cast<cudaError_t>(reset_error)), cudaGetErrorString(after_copy),
              before == after ? "unchanged" : "CHANGED");
  parent.ring(kQuit, 0);
  int status = 0;
  waitpid(runner, &status, 0);
  return ok && after_copy == cudaSuccess && before == after ? 0 : 1;
}
