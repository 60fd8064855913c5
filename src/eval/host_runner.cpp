#include "eval/host_runner.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "sandbox/thread_census.hpp"
#include <exception>
#include <thread>

#include "eval/torch_tensors.hpp"
#include "sandbox/shared_pages.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using forward_fn = int (*)(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*);

constexpr int kMaxTensors = 256;
constexpr int kMaxDims = 16;
constexpr std::size_t kTextBytes = 4096;
constexpr std::size_t kAlignBytes = 64;

// PING follows every CALL inside the timed region: the runner answers it only from its loop, so a
// candidate that rings the CALL's reply itself and works on has that work timed all the same.
enum class Op : std::int32_t { LOAD = 1, ARM = 2, CALL = 3, EXIT = 4, PING = 5 };

// Load outcomes in Header::rc.
constexpr std::int32_t kLoaded = 0, kCannotLoad = 1, kNoEntryPoint = 2;

struct TensorSlot {
  std::uint64_t offset;  // bytes from the start of the data region
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t shape[kMaxDims];
};

// The start of the shared pages. The child writes op, the counts and the slots, then rings
// `command`; the runner writes rc and text, then rings `reply`. The runner's process holds the
// candidate, so the child takes from here only rc and a bounded text, never a size or an offset.
struct Header {
  sandbox::Doorbell command;  // child -> runner: the number of the request
  sandbox::Doorbell reply;    // runner -> child: the number of the request answered
  Op op;
  std::int32_t flush_caches;  // ARM: sweep this core's private caches first (the child's timer sweeps its own)
  std::int32_t rc;
  std::int32_t n_inputs, n_params, n_outputs;
  TensorSlot slots[kMaxTensors];
  char text[kTextBytes];
};
constexpr std::size_t kDataOffset = (sizeof(Header) + 4095) / 4096 * 4096;

void write_text(Header* h, const std::string& s) {
  const std::size_t n = std::min(s.size(), kTextBytes - 1);
  std::memcpy(h->text, s.data(), n);
  h->text[n] = '\0';
}

std::string read_text(const Header* h) { return std::string(h->text, strnlen(h->text, kTextBytes - 1)); }

// ---- the runner's side: runs in the forked process, never returns ----------------------------

struct RunnerViews {
  std::vector<DLTensor> views;
  std::vector<std::array<std::int64_t, kMaxDims>> shapes, strides;
};

// Fresh views of `n` slots from `first` for every call (a call may scribble on the last ones).
void build_views(const Header* h, std::byte* data, int first, int n, RunnerViews& out) {
  out.views.assign(static_cast<std::size_t>(n), DLTensor{});
  out.shapes.resize(static_cast<std::size_t>(n));
  out.strides.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const TensorSlot& s = h->slots[first + i];
    auto& shape = out.shapes[static_cast<std::size_t>(i)];
    auto& strides = out.strides[static_cast<std::size_t>(i)];
    std::int64_t stride = 1;
    for (int d = s.ndim - 1; d >= 0; --d) {
      shape[static_cast<std::size_t>(d)] = s.shape[d];
      strides[static_cast<std::size_t>(d)] = stride;
      stride *= s.shape[d];
    }
    DLTensor& v = out.views[static_cast<std::size_t>(i)];
    v.data = data + s.offset;
    v.device = DLDevice{kDLCPU, 0};
    v.ndim = s.ndim;
    v.dtype = s.dtype;
    v.shape = shape.data();
    v.strides = strides.data();
    v.byte_offset = 0;
  }
}

std::int32_t load(Header* h, const std::string& artifact, forward_fn& fn) {
  void* handle = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    write_text(h, std::string("cannot load the compiled candidate: ") + (e ? e : "dlopen failed"));
    return kCannotLoad;
  }
  fn = reinterpret_cast<forward_fn>(::dlsym(handle, "kernelrl_forward"));
  if (!fn) {
    write_text(h, "the compiled candidate exports no `kernelrl_forward` (declare it extern \"C\" and not static)");
    return kNoEntryPoint;
  }
  return kLoaded;
}

std::int32_t call(Header* h, std::byte* data, forward_fn fn, RunnerViews& in, RunnerViews& params, RunnerViews& out) {
  build_views(h, data, 0, h->n_inputs, in);
  build_views(h, data, h->n_inputs, h->n_params, params);
  build_views(h, data, h->n_inputs + h->n_params, h->n_outputs, out);
  try {
    const int rc = fn(in.views.data(), h->n_inputs, params.views.data(), h->n_params, out.views.data(), h->n_outputs,
                      nullptr);
    if (rc != 0) write_text(h, "kernelrl_forward returned " + std::to_string(rc) + " (non-zero means failure)");
    return rc == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    write_text(h, std::string("kernelrl_forward threw a C++ exception: ") + e.what());
  } catch (...) {
    write_text(h, "kernelrl_forward threw a C++ exception");
  }
  return 1;
}

// Evicts this core's private caches (and its TLB's reach) before a timed call, as the child's timer
// does for its own core before the reference's: twice the L2, by one write per line.
class CacheSweep {
 public:
  void run() {
    if (buffer_.empty()) {
      long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
      buffer_.assign(static_cast<std::size_t>(2 * (l2 > 0 ? l2 : 1l << 20)), 0);
    }
    for (std::size_t i = 0; i < buffer_.size(); i += 64) buffer_[i] = static_cast<char>(buffer_[i] + 1);
    sink_ = buffer_[buffer_.size() / 2];
  }

 private:
  std::vector<char> buffer_;
  volatile char sink_ = 0;
};

[[noreturn]] void run_runner(Header* h, std::byte* data, pid_t parent, const std::string& artifact,
                             const ConfineProcess& confine) {
  // Dies with the child (and so with the engine's kill of the child); keeps no descriptor of it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(1);
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  write_text(h, (confine ? confine() : nlohmann::json::object()).dump());
  std::uint32_t seq = 1;
  h->reply.ring(seq);
  forward_fn fn = nullptr;
  RunnerViews in, params, out;
  CacheSweep sweep;
  Op last = Op::LOAD;
  const auto parent_alive = [parent] { return ::getppid() == parent; };
  for (;;) {
    ++seq;
    // After an ARM the next request is a timed call: spin for it, so its start costs no wake-up.
    // After a call, spin too: in timing the reference's call comes next, in the child, which spins
    // through the candidate's call; so each is timed while the other process spins (a busy
    // neighbour core slows a core by 10-20% on a VM), and the ratio stays fair.
    const auto spin = last == Op::ARM ? 200ms : last == Op::CALL || last == Op::PING ? 50ms : 0ms;
    if (!h->command.wait_for(seq, spin, 1000ms, parent_alive)) _exit(1);
    last = h->op;
    switch (h->op) {
      case Op::LOAD:
        h->rc = load(h, artifact, fn);
        break;
      case Op::ARM:
        if (h->flush_caches) sweep.run();
        h->rc = 0;
        break;
      case Op::CALL:
        h->rc = fn ? call(h, data, fn, in, params, out) : 1;
        break;
      case Op::PING:  // leaves rc and text to the call before it
        break;
      default:
        _exit(0);
    }
    h->reply.ring(seq);
  }
}

// ---- the child's side ------------------------------------------------------------------------

// Ends this process the way the runner ended: the same signal or exit code, so the engine reads
// the candidate's end as it would have, had the candidate run here.
[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

std::size_t round_up(std::size_t n) { return (n + kAlignBytes - 1) / kAlignBytes * kAlignBytes; }

class RunnerCandidate : public Candidate {
 public:
  RunnerCandidate(sandbox::SharedPages pages, pid_t pid, const HostRunnerOptions& options)
      : pages_(std::move(pages)), h_(reinterpret_cast<Header*>(pages_.data())), pid_(pid),
        capacity_(options.tensor_bytes) {
    h_->flush_caches = options.flush_caches ? 1 : 0;
  }

  ~RunnerCandidate() override {
    h_->op = Op::EXIT;
    h_->command.ring(++seq_);
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(1ms);
  }

  // Sends one request and waits for its answer; ends this process like the runner if it died.
  void request(Op op, std::chrono::microseconds spin) {
    h_->op = op;
    h_->command.ring(++seq_);
    wait_for_reply(spin);
  }

  // Waits for the answer to request seq_ (the runner's first, unasked, is its confinement report).
  void wait_for_reply(std::chrono::microseconds spin) {
    const auto runner_alive = [this] {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) end_like(status);
      if (r < 0 && errno == ECHILD) _exit(1);  // cannot happen: the runner is our child
      return true;
    };
    h_->reply.wait_for(seq_, spin, 20ms, runner_alive);
  }

  // The params go to the shared pages once, ahead of the inputs and outputs.
  std::string place_params(const std::vector<py::object>& params) {
    params_ = params;
    return place(params_, Group::PARAMS);
  }

  // Inputs and outputs become tensors over the shared pages (a fresh input is copied there; an
  // output poisoned in place needs no copy), so the checker judges the very bytes the call saw and
  // wrote, and nothing has to be copied back.
  std::string stage(CallArgs& args) override {
    std::string err = place(args.inputs, Group::INPUTS);
    if (err.empty()) err = place(args.outputs, Group::OUTPUTS);
    if (!err.empty()) return err;
    request(Op::ARM, 1000ms);
    return "";
  }

  CallOutcome call(CallArgs&, void*) override {
    CallOutcome out;
    request(Op::CALL, 5ms);
    request(Op::PING, 5ms);
    if (h_->rc != 0) {
      out.error = read_text(h_);
      if (out.error.empty()) out.error = "kernelrl_forward failed";
    }
    return out;
  }

  // Params the call changed are copied back into the reference's, so the checker sees the change
  // (REJECTED) as it would in process.
  std::string collect(CallArgs&) override {
    std::size_t k = 0;
    for (const auto& p : params_) {
      if (!is_tensor(p) || k >= param_slots_.size()) continue;
      HostTensor host = host_view(p);
      const std::size_t n_bytes = static_cast<std::size_t>(host.numel) * element_size_bytes(host.dtype);
      std::byte* at = data() + param_slots_[k].offset;
      if (n_bytes > 0 && std::memcmp(host.data, at, n_bytes) != 0) copy_exact(p, tensor_over(at, p));
      ++k;
    }
    return "";
  }

  bool uses_preallocated_outputs() const override { return true; }

  // The runner must be its one thread between calls: any other is the candidate's, still running
  // after the call that started it returned (or started at load): it could work before the clock,
  // finish a call after it was timed, answer the doorbells in the loop's place or burn the CPU
  // the reference is timed on. The kernel's count is read after the threads a call joined left it.
  std::string refusal_between_calls() override {
    auto census = sandbox::census_after_joins(pid_, kJoinGrace);
    if (!census) return "";  // the runner is gone: the next request ends this process like it
    if (census->leader_alive && census->n_threads == 1) return "";
    if (!census->leader_alive) {
      return "the candidate ended its process's first thread and kept running on threads of its own: host "
             "candidates may start threads inside a call but must join them before returning";
    }
    return "the candidate left " + std::to_string(census->n_threads - 1) +
           " thread(s) of its own running outside its calls: host candidates may start threads inside a call "
           "but must join them before returning (work after the return escapes the timer)";
  }

 private:
  // How long a thread joined at the end of a call may stay in the kernel's count.
  static constexpr std::chrono::microseconds kJoinGrace{2000};

  enum class Group { PARAMS, INPUTS, OUTPUTS };  // laid out in this order in the data region

  std::byte* data() const { return pages_.data() + kDataOffset; }

  // Lays the tensors of `values` out in their group's region and fills their slots; inputs and
  // outputs in `values` are replaced by tensors over the shared pages.
  std::string place(std::vector<py::object>& values, Group group) {
    std::size_t at = group == Group::PARAMS ? 0 : group == Group::INPUTS ? params_end_ : inputs_end_;
    std::vector<TensorSlot> slots;
    for (auto& v : values) {
      if (!is_tensor(v)) continue;
      if (slots.size() >= static_cast<std::size_t>(kMaxTensors / 3)) {
        return "more than " + std::to_string(kMaxTensors / 3) + " tensors in one argument list; the candidate process takes no more";
      }
      const std::vector<std::int64_t> shape = shape_of(v);
      auto dtype = parse_dtype(dtype_name(v));
      if (!dtype) return "unsupported tensor dtype " + dtype_name(v);
      if (shape.size() > static_cast<std::size_t>(kMaxDims)) {
        return "a tensor of " + std::to_string(shape.size()) + " dimensions; the candidate process takes at most " +
               std::to_string(kMaxDims);
      }
      const std::size_t n_bytes = static_cast<std::size_t>(v.attr("numel")().cast<std::int64_t>()) * element_size_bytes(*dtype);
      if (at + round_up(n_bytes) > capacity_) {
        return "the call's tensors need more than the " + std::to_string(capacity_) +
               " bytes the candidate process was given for them (sized from the task's signature)";
      }
      TensorSlot s{};
      s.offset = at;
      s.ndim = static_cast<std::int32_t>(shape.size());
      const auto dl = to_dlpack(*dtype);
      s.dtype = DLDataType{dl.code, dl.bits, 1};
      std::copy(shape.begin(), shape.end(), s.shape);
      std::byte* dst = data() + at;
      if (group == Group::PARAMS) {
        HostTensor host = host_view(v);
        if (n_bytes > 0) std::memcpy(dst, host.data, n_bytes);
      } else if (n_bytes > 0 && data_address(v) != static_cast<const void*>(dst)) {
        py::object shared = tensor_over(dst, v);
        copy_exact(shared, v);
        v = shared;
      }
      slots.push_back(s);
      at += round_up(n_bytes);
    }
    if (group == Group::PARAMS) {
      params_end_ = at;
      param_slots_ = std::move(slots);
    } else if (group == Group::INPUTS) {
      inputs_end_ = at;
      input_slots_ = std::move(slots);
    } else {
      output_slots_ = std::move(slots);
    }
    // The header's slots in call order: inputs, params, outputs.
    h_->n_inputs = static_cast<std::int32_t>(input_slots_.size());
    h_->n_params = static_cast<std::int32_t>(param_slots_.size());
    h_->n_outputs = static_cast<std::int32_t>(output_slots_.size());
    int k = 0;
    for (const auto* list : {&input_slots_, &param_slots_, &output_slots_}) {
      for (const auto& slot : *list) h_->slots[k++] = slot;
    }
    return "";
  }

  sandbox::SharedPages pages_;
  Header* h_;
  pid_t pid_;
  std::uint32_t seq_ = 1;
  std::size_t capacity_;
  std::vector<py::object> params_;
  std::vector<TensorSlot> param_slots_, input_slots_, output_slots_;
  std::size_t params_end_ = 0, inputs_end_ = 0;
};

}  // namespace

HostRunnerStart start_host_runner(const std::string& artifact, const std::vector<py::object>& params,
                                  const HostRunnerOptions& options, const ConfineProcess& confine) {
  HostRunnerStart out;
  auto pages = sandbox::SharedPages::create(kDataOffset + options.tensor_bytes);
  if (!pages) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = "cannot start the candidate's process: " + pages.error().message;
    return out;
  }
  auto* h = new (pages->data()) Header{};
  std::byte* data = pages->data() + kDataOffset;
  ::signal(SIGCHLD, SIG_DFL);  // the runner's end must be waitable
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) run_runner(h, data, parent, artifact, confine);
  if (pid < 0) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = std::string("cannot start the candidate's process: fork failed: ") + std::strerror(errno);
    return out;
  }
  // The runner may not read this process's memory through /proc/<pid>/mem (same user otherwise).
  ::prctl(PR_SET_DUMPABLE, 0);
  auto runner = std::make_unique<RunnerCandidate>(std::move(*pages), pid, options);
  // Its confinement report (read before any candidate code runs there), then the load.
  runner->wait_for_reply(0us);
  out.isolation = nlohmann::json::parse(read_text(h), nullptr, false);
  if (!out.isolation.is_object()) out.isolation = {{"report_error", "the runner's confinement report is not a JSON object"}};
  runner->request(Op::LOAD, 0us);
  if (h->rc != kLoaded) {
    out.loaded.status = h->rc == kNoEntryPoint ? common::Status::FORMAT_ERROR : common::Status::RUNTIME_ERROR;
    out.loaded.error = read_text(h);
    return out;
  }
  if (auto err = runner->place_params(params); !err.empty()) {
    out.loaded.status = common::Status::RUNTIME_ERROR;
    out.loaded.error = err;
    return out;
  }
  out.loaded.candidate = std::move(runner);
  return out;
}

}  // namespace kernelrl::eval
