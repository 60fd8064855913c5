#include "eval/runner_candidate.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "eval/child_context.hpp"
#include "eval/dtype.hpp"
#include "eval/gpu.hpp"
#include "eval/stats.hpp"
#include "eval/torch_tensors.hpp"
#include "sandbox/thread_census.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using runner::Op;

constexpr std::size_t kAlignBytes = 256;  // device kernels may assume aligned vectors

// How long a thread joined at the end of a call may stay in the kernel's count.
constexpr std::chrono::microseconds kJoinGrace{2000};

// CPU time the runner spends between answering one request and receiving the next is judged by
// OutsideWindows: its loop's (the first thread) and its whole process's. The loop reads its own CPU
// clock right before each answer, which brings the kernel's count up to date (the kernel adds a
// running thread's time only when it stops or asks), and the child reads the count once the loop
// sleeps again; a runner whose loop the candidate took over skips the first and only reads higher
// here. Other threads may not run between calls at all (the thread census).

// How long the runner's loop may take to fall asleep after an answer: on a busy machine it may wait
// for a CPU a few scheduler periods; still running after this, it is working.
constexpr std::chrono::milliseconds kAsleepWithin{250};

// How long the child spins for an answer before it sleeps: a call's answer costs no wake-up of the
// child's (the runner, asleep between requests, pays one: both in every call and in the idle calls).
// Only while a CPU is free for the runner (checked as a timed call is armed): on a machine whose
// CPUs are all busy a spinning child takes the runner's CPU, and the call's time turns into
// scheduler quanta; there the child sleeps at once (the wait is measured: EvalResult::timing_unstable).
constexpr std::chrono::microseconds kReplySpin = 5ms;

std::size_t round_up(std::size_t n) { return (n + kAlignBytes - 1) / kAlignBytes * kAlignBytes; }

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

std::string first_names(const nlohmann::json& names) {
  std::string out;
  if (!names.is_array()) return out;
  for (const auto& n : names) {
    if (!n.is_string()) continue;
    out += (out.empty() ? "" : ", ") + n.get<std::string>().substr(0, 120);
  }
  return out;
}

}  // namespace

RunnerMemory device_arena(runner::Header* h, std::size_t bytes) {
  auto arena = std::make_shared<gpu::SharedArena>();
  if (auto made = arena->init(bytes); !made) {
    throw TaskError{"cannot allocate the candidate's device arena: " + made.error().message};
  }
  if (auto exported = arena->export_handle(h->ipc_handle, sizeof h->ipc_handle); !exported) {
    throw TaskError{"cannot export the candidate's device arena: " + exported.error().message};
  }
  h->device = arena->device();
  h->arena_bytes = bytes;
  RunnerMemory memory;
  memory.data = static_cast<std::byte*>(arena->data());
  memory.bytes = bytes;
  memory.cuda_device = arena->device();
  // The child's copies into the arena (on its stream) end before the runner reads it.
  memory.settle_staging = [] { return gpu::synchronize_and_check(); };
  memory.owner = arena;
  return memory;
}

RunnerCandidate::RunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, CallRules rules)
    : pages_(std::move(pages)), h_(reinterpret_cast<runner::Header*>(pages_.data())), pid_(pid),
      memory_(std::move(memory)), rules_(rules) {
  have_cpu_clock_ = ::clock_getcpuclockid(pid_, &cpu_clock_) == 0;
}

// Asks the runner to exit and waits for it a little. Never signals it: a runner still exiting (a GPU
// one tearing down a large context) is killed by PR_SET_PDEATHSIG when the child ends.
RunnerCandidate::~RunnerCandidate() {
  h_->op = Op::EXIT;
  h_->command.ring(++seq_);
  int status = 0;
  for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(1ms);
}

RunnerCandidate::CpuReading RunnerCandidate::read_cpu() const {
  CpuReading r;
  timespec t{};
  if (have_cpu_clock_ && ::clock_gettime(cpu_clock_, &t) == 0) {
    r.process_ns = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  }
  // The first thread's own count.
  if (auto stat = sandbox::thread_schedstat(pid_, pid_)) r.loop_ns = stat->on_cpu_ns;
  return r;
}

void RunnerCandidate::close_outside_window() {
  if (at_reply_.process_ns < 0 && at_reply_.loop_ns < 0) return;
  // Read only once the loop sleeps: the kernel adds a running thread's time when it stops, and a
  // candidate that answered early is still at work here.
  const auto deadline = std::chrono::steady_clock::now() + kAsleepWithin;
  for (;;) {
    auto census = sandbox::thread_census(pid_);
    if (!census || !census->leader_running) break;  // asleep, or gone (the request ends this process like it)
    if (std::chrono::steady_clock::now() >= deadline) {
      still_running_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  const CpuReading now = read_cpu();
  if (now.loop_ns >= 0 && at_reply_.loop_ns >= 0) loop_outside_.add(now.loop_ns - at_reply_.loop_ns);
  if (now.process_ns >= 0 && at_reply_.process_ns >= 0) process_outside_.add(now.process_ns - at_reply_.process_ns);
  at_reply_ = CpuReading{};
}

void RunnerCandidate::request(Op op, bool close_window) {
  if (close_window) close_outside_window();  // already closed by arm() before a timed call's clock started
  h_->op = op;
  h_->command.ring(++seq_);
  const auto runner_alive = [this] {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) end_like(status);
    if (r < 0 && errno == ECHILD) _exit(1);  // cannot happen: the runner is our child
    return true;
  };
  h_->reply.wait_for(seq_, spin_for_reply_ ? kReplySpin : 0us, 20ms, runner_alive);
  at_reply_ = read_cpu();
}

nlohmann::json RunnerCandidate::start(const std::string& text) {
  if (text.size() >= runner::kTextBytes) throw TaskError{"the candidate's process cannot be started: its paths are too long"};
  runner::write_text(h_, text);
  h_->op = Op::START;
  h_->command.ring(1);
  const auto runner_alive = [this] {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      throw TaskError{"the candidate's process ended before it was set up (" +
                      std::string(WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                      : "exit code " + std::to_string(WEXITSTATUS(status))) +
                      "): " + runner::read_text(h_)};
    }
    return true;
  };
  h_->reply.wait_for(1, 0us, 20ms, runner_alive);
  at_reply_ = read_cpu();
  if (h_->rc != 0) throw TaskError{"the candidate's process could not set itself up: " + runner::read_text(h_)};
  nlohmann::json report = nlohmann::json::parse(runner::read_text(h_), nullptr, false);
  if (!report.is_object()) report = {{"report_error", "the runner's set-up report is not a JSON object"}};
  auto census = sandbox::thread_census(pid_);
  if (!census) throw TaskError{"cannot count the candidate process's threads: " + census.error().message};
  threads_ = census->n_threads;
  report["threads_between_calls"] = census->n_threads;
  report["separate"] = true;
  // What it records of every call below Python; its records are then required (a missing one is refused).
  expects_op_record_ = report.value("op_record", false);
  expects_launch_record_ = report.value("launch_audit", false);
  return report;
}

nlohmann::json RunnerCandidate::set_idle_calls(const std::vector<double>& times_ms) {
  std::vector<double> us;
  for (double t : times_ms) us.push_back(t * 1000.0);
  const SampleStats stats = summarize(us);
  idle_call_ms_ = stats.median / 1000.0;
  return {{"idle_call_us", stats.median}, {"idle_call_p10_us", stats.p10}, {"idle_call_p90_us", stats.p90},
          {"n_idle_calls", stats.n}, {"measured", "before the candidate was loaded"}};
}

std::optional<LoadOutcome> RunnerCandidate::load() {
  request(Op::LOAD);
  if (h_->rc == runner::kLoaded) return std::nullopt;
  LoadOutcome failed;
  failed.status = h_->rc == runner::kNoEntryPoint ? common::Status::FORMAT_ERROR : common::Status::RUNTIME_ERROR;
  failed.error = runner::read_text(h_);
  return failed;
}

common::Fallible RunnerCandidate::place_params(const std::vector<py::object>& params) {
  params_ = params;
  return place(params_, Group::PARAMS);
}

// Inputs and outputs become tensors over the shared memory (a fresh input is copied there; an
// output poisoned in place needs no copy), so the checker judges the very bytes the call saw and
// wrote, and nothing has to be copied back.
common::Fallible RunnerCandidate::stage(CallArgs& args) { return stage_tensors(args.inputs, args.outputs); }

common::Fallible RunnerCandidate::stage_tensors(std::vector<py::object>& inputs, std::vector<py::object>& outputs) {
  if (auto placed = place(inputs, Group::INPUTS); !placed) return placed;
  if (auto placed = place(outputs, Group::OUTPUTS); !placed) return placed;
  if (memory_.settle_staging) return memory_.settle_staging();
  return common::Ok{};
}

common::Fallible RunnerCandidate::arm() {
  close_outside_window();  // before the clock starts: the call's request finds it closed
  spin_for_reply_ = sandbox::idle_cpu_available();
  return common::Ok{};
}

common::Fallible RunnerCandidate::idle_call() {
  request(Op::IDLE);
  return common::Ok{};
}

CallOutcome RunnerCandidate::call(CallArgs&, void*) {
  CallOutcome out;
  call_requested();
  if (h_->rc != 0) {
    std::string message = runner::read_text(h_);
    out.failure = CallFailure{message.empty() ? "kernelrl_forward failed" : message};
  }
  return out;
}

void RunnerCandidate::call_requested() {
  request(Op::CALL);
  record_pending_ = true;
}

std::optional<std::string> RunnerCandidate::refused_by_record(const nlohmann::json& record) const {
  if (!rules_.torch_operators && !rules_.foreign_kernels) return std::nullopt;
  if (!record.is_object()) {
    return "the candidate's process gave no record of the call's operators and kernels (its record below Python was "
           "overwritten)";
  }
  if (rules_.torch_operators && expects_op_record_) {
    const auto ops = record.value("ops", nlohmann::json());
    if (!ops.is_object() || !ops.contains("refused")) return "the call's record of PyTorch operators is missing";
    if (!ops.value("intact", false)) {
      return "the candidate switched off the record of the PyTorch operators its calls run (RecordFunction)";
    }
    if (!ops["refused"].empty()) {
      return "ModelNew.forward ran PyTorch operators instead of the candidate's own kernels: " +
             first_names(ops["refused"]) +
             " (kernelbench candidates may use torch only to allocate, view, copy or fill tensors)";
    }
  }
  if (rules_.foreign_kernels && expects_launch_record_) {
    const auto launches = record.value("launches", nlohmann::json());
    if (!launches.is_object() || !launches.contains("foreign_kernels")) return "the call's record of GPU launches is missing";
    if (!launches.value("audit_intact", false)) {
      return "the candidate switched off the record of the GPU kernels its calls launch (CUPTI)";
    }
    if (launches.value("n_foreign", 0) + launches.value("n_foreign_between_calls", 0) > 0) {
      return "the candidate's process launched GPU kernels that are not its own: " +
             first_names(launches["foreign_kernels"]) + " (candidates compute with the kernels they define, not a library's)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> RunnerCandidate::ask_record(bool close_window) {
  record_pending_ = false;
  request(Op::RECORD, close_window);
  const nlohmann::json record = nlohmann::json::parse(runner::read_audit_text(h_), nullptr, false);
  evidence_.add(record);
  return refused_by_record(record);
}

std::optional<std::string> RunnerCandidate::settle_last_record() {
  return record_pending_ ? ask_record(false) : std::nullopt;
}

// Params the call changed are copied back into the reference's, so the checker sees the change
// (REJECTED) as it would in process.
common::Fallible RunnerCandidate::collect(CallArgs&) {
  std::size_t k = 0;
  for (const auto& p : params_) {
    if (!is_tensor(p) || k >= param_slots_.size()) continue;
    py::object shared = over(memory_.data + param_slots_[k].offset, p);
    if (!bytes_equal(shared, p)) copy_exact(p, shared);
    ++k;
  }
  return common::Ok{};
}

// Between calls the runner must be back to its own threads, and asleep: any other thread is the
// candidate's, still running after the call that started it returned (or started at load), and CPU
// time spent between an answer and the next request is work the child did not time (ahead of a
// call from inputs already staged, or after answering early). Both are read from the kernel.
std::optional<std::string> RunnerCandidate::refusal_between_calls() {
  if (record_pending_) {
    if (auto refused = ask_record(true)) return refused;
  }
  if (still_running_) {
    return "the candidate's process was still running " + std::to_string(kAsleepWithin.count()) +
           " ms after answering the evaluator: work outside the calls escapes the timer";
  }
  if (auto refused = loop_outside_.refusal()) return refused;
  if (auto refused = process_outside_.refusal()) return refused;
  auto census = sandbox::census_after_joins(pid_, kJoinGrace, threads_);
  if (!census) return std::nullopt;  // the runner is gone: the next request ends this process like it
  if (census->leader_alive && census->n_threads <= threads_) return std::nullopt;
  if (!census->leader_alive) {
    return "the candidate ended its process's first thread and kept running on threads of its own: candidates "
           "may start threads inside a call but must join them before returning";
  }
  return "the candidate left " + std::to_string(census->n_threads - threads_) +
         " thread(s) of its own running outside its calls: candidates may start threads inside a call but must "
         "join them before returning (work after the return escapes the timer)";
}

nlohmann::json RunnerCandidate::outside_calls_record() const {
  nlohmann::json record = loop_outside_.record("loop_cpu");
  record.update(process_outside_.record("process_cpu"));
  record["cpu_clock"] = have_cpu_clock_;
  return record;
}

py::object RunnerCandidate::over(std::byte* at, const py::object& like) const {
  return memory_.cuda_device >= 0 ? device_tensor_over(at, like, memory_.cuda_device) : tensor_over(at, like);
}

// Lays the tensors of `values` out in their group's region and fills their slots; inputs and
// outputs in `values` are replaced by tensors over the shared memory.
common::Fallible RunnerCandidate::place(std::vector<py::object>& values, Group group) {
  std::size_t at = group == Group::PARAMS ? 0 : group == Group::INPUTS ? params_end_ : inputs_end_;
  std::vector<runner::TensorSlot> slots;
  for (auto& v : values) {
    if (!is_tensor(v)) continue;
    if (slots.size() >= static_cast<std::size_t>(runner::kMaxTensors / 3)) {
      return common::make_error("more than " + std::to_string(runner::kMaxTensors / 3) +
                                " tensors in one argument list; the candidate process takes no more");
    }
    const std::vector<std::int64_t> shape = shape_of(v);
    auto dtype = parse_dtype(dtype_name(v));
    if (!dtype) return common::make_error("unsupported tensor dtype " + dtype_name(v));
    if (shape.size() > static_cast<std::size_t>(runner::kMaxDims)) {
      return common::make_error("a tensor of " + std::to_string(shape.size()) +
                                " dimensions; the candidate process takes at most " + std::to_string(runner::kMaxDims));
    }
    const std::size_t n_bytes =
        static_cast<std::size_t>(v.attr("numel")().cast<std::int64_t>()) * element_size_bytes(*dtype);
    if (at + round_up(n_bytes) > memory_.bytes) {
      return common::make_error("the call's tensors need more than the " + std::to_string(memory_.bytes) +
                                " bytes the candidate process was given for them (sized from the task's signature)");
    }
    runner::TensorSlot s{};
    s.offset = at;
    s.ndim = static_cast<std::int32_t>(shape.size());
    const auto dl = to_dlpack(*dtype);
    s.dtype = DLDataType{dl.code, dl.bits, 1};
    std::copy(shape.begin(), shape.end(), s.shape);
    std::byte* dst = memory_.data + at;
    if (group == Group::PARAMS) {
      if (n_bytes > 0) copy_exact(over(dst, v), v);
    } else if (n_bytes > 0 && data_address(v) != static_cast<const void*>(dst)) {
      py::object shared = over(dst, v);
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
  return common::Ok{};
}

}  // namespace kernelrl::eval
