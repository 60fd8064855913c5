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
//   - timing blocks (the design's next step): the parent idle on the GPU while the runner's calls are
//     timed on the host clock, L2 flushed by the runner in its own context before each, against the
//     parent's own block (host clock and events);
//   - the engine's clock by call length (as eval/child_timing.cpp times a candidate apart): the L2
//     flushed in the parent and waited for, ARM (the runner enqueues its own flush and answers at
//     once), the clock started, CALL and PING, the parent's device synchronised; less the median of
//     IDLE calls timed the same way, taken after all the calls (the engine) or beside each call;
//     against events around the same work in the parent after its flush (the engine in the child);
//   - faults: the runner calls cudaDeviceReset; the parent's context, its arena and a copy after it
//     are checked intact;
//   - the runner's thread count after CUDA set itself up (what a thread rule must allow);
//   - with a built native candidate for examples/vector_add (second argument: its .so), the
//     candidate itself: called in the parent on its own buffers (today's engine) and in the runner
//     on DLTensor views of the arena (inputs written by the parent, the output poisoned by it
//     before every call and checked by it after the last one): medians, ratio, mismatches.
// Needs a GPU; without one it says so and exits 0.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <kernelrl/abi.h>
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
#include <functional>
#include <new>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

enum Op : int { kCall = 1, kReset = 2, kQuit = 3, kCandidate = 4, kFlush = 5, kArm = 6, kIdle = 7, kPing = 8 };

// examples/vector_add/task.py: C = A + B, (6144, 8192) float32.
constexpr std::int64_t kRows = 6144, kCols = 8192;
constexpr std::size_t kVaddBytes = kRows * kCols * sizeof(float);

using Forward = int (*)(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*);

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
  int runner_threads = 0;                  // after cudaFree(0)
  int runner_threads_after_calls = 0;      // after the candidate's calls (CUDA may start more lazily)
  char message[160] = {};
  char candidate[512] = {};                // the built candidate kCandidate calls
  int candidate_rc = 0;                    // what its kernelrl_forward returned
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

// A contiguous (kRows, kCols) float32 view of `data` on device 0.
struct View {
  std::int64_t shape[2] = {kRows, kCols};
  std::int64_t strides[2] = {kCols, 1};
  DLTensor t{};
  explicit View(void* data) {
    t.data = data;
    t.device = {kDLCUDA, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = strides;
  }
  View(const View&) = delete;
};

// Calls vector_add's kernelrl_forward on a, b -> c at `base` (three tensors one after the other).
int call_vadd(Forward forward, char* base, cudaStream_t stream) {
  View a(base), b(base + kVaddBytes), c(base + 2 * kVaddBytes);
  DLTensor inputs[2] = {a.t, b.t};
  return forward(inputs, 2, nullptr, 0, &c.t, 1, stream);
}

Forward load_forward(const char* path, char* message, std::size_t message_size) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  void* sym = lib ? dlsym(lib, "kernelrl_forward") : nullptr;
  if (!sym) std::snprintf(message, message_size, "cannot load %s: %s", path, dlerror());
  return reinterpret_cast<Forward>(sym);
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
  int l2 = 0;
  void* flush = nullptr;  // 2 x L2, written before a call to evict what the last one left (kFlush)
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  if (e == cudaSuccess) e = cudaMalloc(&flush, 2 * static_cast<std::size_t>(l2));
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
    } else if (op == kArm && sh->error == cudaSuccess) {  // the flush only enqueued: the call queues behind it
      e = cudaMemsetAsync(flush, static_cast<int>(served & 0xff), 2 * static_cast<std::size_t>(l2), stream);
    } else if (op == kIdle && sh->error == cudaSuccess) {
      e = cudaDeviceSynchronize();
    } else if (op == kPing) {
    } else if (op == kFlush && sh->error == cudaSuccess) {
      e = cudaMemsetAsync(flush, static_cast<int>(served & 0xff), 2 * static_cast<std::size_t>(l2), stream);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    } else if (op == kCandidate && sh->error == cudaSuccess) {
      static Forward forward = load_forward(sh->candidate, sh->message, sizeof sh->message);
      sh->candidate_rc = forward ? call_vadd(forward, static_cast<char*>(base), stream) : -1;
      e = cudaDeviceSynchronize();
      sh->runner_threads_after_calls = thread_count();
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

// vector_add's candidate in the parent (on `own`) and in the runner (on the arena): timed the same
// way as the copies above; the runner's last output checked against A + B.
bool run_candidate(Parent& parent, const char* path, char* arena, char* own, cudaStream_t stream, cudaEvent_t start,
                   cudaEvent_t end, int reps) {
  char message[512] = {};
  Forward forward = load_forward(path, message, sizeof message);
  if (!forward) {
    std::printf("FAILED %s\n", message);
    return false;
  }
  const std::size_t n = kVaddBytes / sizeof(float);
  std::vector<float> a(n), b(n), c(n);
  std::uint32_t x = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    a[i] = static_cast<float>(x >> 8) / 16777216.0f - 0.5f;
    b[i] = static_cast<float>((x * 2654435761u) >> 8) / 16777216.0f;
  }
  for (char* base : {arena, own}) {
    if (!check(cudaMemcpy(base, a.data(), kVaddBytes, cudaMemcpyHostToDevice), "write A") ||
        !check(cudaMemcpy(base + kVaddBytes, b.data(), kVaddBytes, cudaMemcpyHostToDevice), "write B")) {
      return false;
    }
  }
  std::vector<double> in_proc, in_runner;
  int rc_parent = 0;
  for (int r = 0; r < reps + 5; ++r) {
    float ms = 0;
    cudaMemsetAsync(own + 2 * kVaddBytes, 0xff, kVaddBytes, stream);  // poisoned (NaN), untimed
    cudaEventRecord(start, stream);
    rc_parent |= call_vadd(forward, own, stream);
    cudaEventRecord(end, stream);
    cudaEventSynchronize(end);
    cudaEventElapsedTime(&ms, start, end);
    if (r >= 5) in_proc.push_back(1000.0 * ms);
    cudaMemsetAsync(arena + 2 * kVaddBytes, 0xff, kVaddBytes, stream);
    cudaStreamSynchronize(stream);
    cudaEventRecord(start, stream);
    if (!parent.ring(kCandidate, 0)) {
      std::printf("FAILED candidate in the runner: %s %s\n", parent.sh->message,
                  cudaGetErrorString(static_cast<cudaError_t>(parent.sh->error)));
      return false;
    }
    cudaEventRecord(end, stream);
    cudaEventSynchronize(end);
    cudaEventElapsedTime(&ms, start, end);
    if (r >= 5) in_runner.push_back(1000.0 * ms);
  }
  if (!check(cudaMemcpy(c.data(), arena + 2 * kVaddBytes, kVaddBytes, cudaMemcpyDeviceToHost), "read C")) return false;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  const double p = median(in_proc), q = median(in_runner);
  std::printf("vector_add candidate (%s): in-process %.2f us, in the runner %.2f us, ratio %.3f (+%.2f us); "
              "return codes %d / %d; runner's output: %zu of %zu elements differ from A + B; runner threads after "
              "the calls: %d (after cudaFree(0): %d)\n",
              path, p, q, p > 0 ? q / p : 0.0, q - p, rc_parent, parent.sh->candidate_rc, wrong, n,
              parent.sh->runner_threads_after_calls, parent.sh->runner_threads);
  return wrong == 0 && rc_parent == 0 && parent.sh->candidate_rc == 0;
}

// Timing blocks: the next step of the design (docs/security.md). The parent does no GPU work while
// the runner's calls are timed: before each call the runner flushes L2 in its own context (untimed),
// then the parent times the call on the host clock from its doorbell to the runner's answer (the
// runner launches and synchronises). The baseline is the parent's own block: L2 flushed, then the
// same work launched and synchronised on the host clock (and, as the engine times today, between
// events). `work(in_runner)` makes one call. Prints one row: medians and the runner's excess.
void timing_block(Parent& parent, const char* label, cudaStream_t stream, cudaEvent_t start, cudaEvent_t end,
                  char* own_flush, std::size_t flush_bytes, int reps, const std::function<bool(bool)>& work) {
  std::vector<double> in_events, in_host, runner_host;
  for (int r = 0; r < reps + 5; ++r) {  // the parent's own block first
    float ms = 0;
    cudaMemsetAsync(own_flush, r & 0xff, flush_bytes, stream);
    cudaStreamSynchronize(stream);
    auto h0 = clock_type::now();
    cudaEventRecord(start, stream);
    work(false);
    cudaEventRecord(end, stream);
    cudaStreamSynchronize(stream);
    auto h1 = clock_type::now();
    cudaEventElapsedTime(&ms, start, end);
    if (r >= 5) in_events.push_back(1000.0 * ms), in_host.push_back(1000.0 * ms_between(h0, h1));
  }
  for (int r = 0; r < reps + 5; ++r) {  // then the runner's: nothing of the parent's on the GPU
    if (!parent.ring(kFlush, 0)) {
      std::printf("FAILED runner flush: %s\n", cudaGetErrorString(static_cast<cudaError_t>(parent.sh->error)));
      return;
    }
    auto h0 = clock_type::now();
    if (!work(true)) {
      std::printf("FAILED runner call: %s\n", cudaGetErrorString(static_cast<cudaError_t>(parent.sh->error)));
      return;
    }
    auto h1 = clock_type::now();
    if (r >= 5) runner_host.push_back(1000.0 * ms_between(h0, h1));
  }
  const double ev = median(in_events), host = median(in_host), run = median(runner_host);
  std::printf("%-22s %12.2f %12.2f %12.2f %10.2f %8.3f\n", label, ev, host, run, run - host, ev > 0 ? run / ev : 0.0);
}

// The engine's clock for a call in the runner (eval/child_timing.cpp, GpuHostClockTimer): the
// parent's L2 flush waited for, ARM, then CALL and PING timed on the host clock up to the parent's
// device synchronisation; an IDLE call the same way with no work. One row: events around the same
// work in the parent after its flush (the engine in the child), the runner's calls less the IDLE
// median taken after all of them (the engine apart), and less IDLE calls timed beside each call.
void engine_clock(Parent& parent, const char* label, cudaStream_t stream, cudaEvent_t start, cudaEvent_t end,
                  char* own_flush, std::size_t flush_bytes, int reps, const std::function<bool(bool)>& work) {
  std::vector<double> in_events, calls, idle_after, idle_beside;
  for (int r = 0; r < reps + 5; ++r) {  // in the parent, as GpuTimer: the flush enqueued, then the events
    float ms = 0;
    cudaMemsetAsync(own_flush, r & 0xff, flush_bytes, stream);
    cudaEventRecord(start, stream);
    work(false);
    cudaEventRecord(end, stream);
    cudaEventSynchronize(end);
    cudaEventElapsedTime(&ms, start, end);
    if (r >= 5) in_events.push_back(1000.0 * ms);
  }
  // One request through the runner on the host clock, as the engine times it: the work (CALL) or IDLE.
  const auto timed = [&](const std::function<bool()>& call) -> double {
    cudaMemsetAsync(own_flush, 0x3c, flush_bytes, stream);
    cudaStreamSynchronize(stream);
    if (!parent.ring(kArm, 0)) return -1;
    auto h0 = clock_type::now();
    if (!call() || !parent.ring(kPing, 0)) return -1;
    cudaDeviceSynchronize();
    return 1000.0 * ms_between(h0, clock_type::now());
  };
  const auto idle = [&] { return parent.ring(kIdle, 0); };
  for (int r = 0; r < reps + 5; ++r) {
    const double call_us = timed([&] { return work(true); });
    const double idle_us = timed(idle);
    if (call_us < 0 || idle_us < 0) {
      std::printf("FAILED %s in the runner: %s\n", label, cudaGetErrorString(static_cast<cudaError_t>(parent.sh->error)));
      return;
    }
    if (r >= 5) calls.push_back(call_us), idle_beside.push_back(idle_us);
  }
  for (int r = 0; r < reps; ++r) {
    idle_after.push_back(timed(idle));
    if (idle_after.back() < 0) {
      std::printf("FAILED %s, IDLE: %s\n", label, cudaGetErrorString(static_cast<cudaError_t>(parent.sh->error)));
      return;
    }
  }
  const double ev = median(in_events), after = median(calls) - median(idle_after),
               beside = median(calls) - median(idle_beside);
  std::printf("%-22s %11.2f %13.2f %8.3f %13.2f %8.3f %10.2f %10.2f\n", label, ev, after, ev > 0 ? after / ev : 0.0,
              beside, ev > 0 ? beside / ev : 0.0, median(idle_after), median(idle_beside));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(5, std::atoi(argv[1])) : 200;
  const std::vector<std::size_t> sizes = {0, 1 << 16, 1 << 20, 16 << 20, 256 << 20};
  const std::size_t max_bytes = std::max(sizes.back(), 2 * kVaddBytes);  // the arena also holds vector_add's a, b, c
  const char* candidate = argc > 2 ? argv[2] : nullptr;

  void* pages = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* sh = new (pages) Shared();
  if (candidate) std::snprintf(sh->candidate, sizeof sh->candidate, "%s", candidate);
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

  if (candidate && !run_candidate(parent, candidate, arena, own, stream, start, end, reps)) ok = false;

  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  const std::size_t flush_bytes = 2 * static_cast<std::size_t>(l2);
  char* own_flush = nullptr;
  ok = ok && check(cudaMalloc(&own_flush, flush_bytes), "cudaMalloc flush");
  // The works both sections below time: copies of each size, then the vector_add candidate if given.
  char message[512] = {};
  const Forward forward = candidate ? load_forward(candidate, message, sizeof message) : nullptr;
  struct Work {
    std::string label;
    std::function<bool(bool)> run;  // run(in_runner): one call in the runner or in the parent
  };
  const auto works = [&](const std::vector<std::size_t>& byte_sizes) {
    std::vector<Work> out;
    for (std::size_t bytes : byte_sizes) {
      out.push_back({"copy " + std::to_string(bytes) + " B", [&, bytes](bool in_runner) {
                       if (in_runner) return parent.ring(kCall, bytes);
                       return cudaMemcpyAsync(own + bytes, own, bytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
                     }});
    }
    if (forward) {
      out.push_back({"vector_add candidate", [&](bool in_runner) {
                       if (in_runner) return parent.ring(kCandidate, 0) && sh->candidate_rc == 0;
                       return call_vadd(forward, own, stream) == 0;
                     }});
    }
    return out;
  };
  std::printf("timing blocks (L2 flushed before each call; the parent idle on the GPU during the runner's):\n");
  std::printf("%-22s %12s %12s %12s %10s %8s\n", "work", "events us", "host us", "runner us", "excess us", "ratio");
  for (const Work& w : works(sizes)) {
    timing_block(parent, w.label.c_str(), stream, start, end, own_flush, flush_bytes, reps, w.run);
  }
  std::printf("the engine's clock by call length (apart: host clock less the IDLE median, taken after all calls or "
              "beside each; in the child: events):\n");
  std::printf("%-22s %11s %13s %8s %13s %8s %10s %10s\n", "work", "events us", "apart us", "ratio", "beside us",
              "ratio", "idle after", "idle beside");
  for (const Work& w : works({std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{64} << 20, std::size_t{256} << 20})) {
    engine_clock(parent, w.label.c_str(), stream, start, end, own_flush, flush_bytes, reps, w.run);
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
