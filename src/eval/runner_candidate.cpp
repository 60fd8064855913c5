#include "eval/runner_candidate.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "eval/child_context.hpp"
#include "eval/dtype.hpp"
#include "eval/gpu.hpp"
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

RunnerCandidate::RunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, bool flush_caches,
                                 int threads)
    : pages_(std::move(pages)), h_(reinterpret_cast<runner::Header*>(pages_.data())), pid_(pid),
      memory_(std::move(memory)), threads_(threads) {
  h_->flush_caches = flush_caches ? 1 : 0;
}

// Asks the runner to exit and waits for it a little. Never signals it: the child's system-call
// filter allows signals only to the child itself, so a kill() here would end the child by SIGSYS
// (read as the candidate's forbidden call). A runner still exiting (a GPU one tearing down a large
// context) is killed by PR_SET_PDEATHSIG when the child ends.
RunnerCandidate::~RunnerCandidate() {
  h_->op = Op::EXIT;
  h_->command.ring(++seq_);
  int status = 0;
  for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(1ms);
}

void RunnerCandidate::start(const std::string& text) {
  if (text.size() >= runner::kTextBytes) throw TaskError{"the candidate's process cannot be started: its paths are too long"};
  runner::write_text(h_, text);
  h_->op = Op::START;
  h_->command.ring(1);
}

void RunnerCandidate::request(Op op, std::chrono::microseconds spin) {
  h_->op = op;
  h_->command.ring(++seq_);
  wait_for_reply(spin);
}

void RunnerCandidate::wait_for_reply(std::chrono::microseconds spin) {
  const auto runner_alive = [this] {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) end_like(status);
    if (r < 0 && errno == ECHILD) _exit(1);  // cannot happen: the runner is our child
    return true;
  };
  h_->reply.wait_for(seq_, spin, 20ms, runner_alive);
}

nlohmann::json RunnerCandidate::read_report() {
  wait_for_reply(0us);
  nlohmann::json report = nlohmann::json::parse(runner::read_text(h_), nullptr, false);
  if (!report.is_object()) report = {{"report_error", "the runner's confinement report is not a JSON object"}};
  return report;
}

nlohmann::json RunnerCandidate::read_set_up_report() {
  nlohmann::json report = read_report();
  if (h_->rc != 0) throw TaskError{"the candidate's process could not set itself up: " + runner::read_text(h_)};
  auto census = sandbox::thread_census(pid_);
  if (!census) throw TaskError{"cannot count the candidate process's threads: " + census.error().message};
  threads_ = census->n_threads;
  report["threads_between_calls"] = census->n_threads;
  return report;
}

std::optional<LoadOutcome> RunnerCandidate::load() {
  request(Op::LOAD, 0us);
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
  request(Op::ARM, 1000ms);
  return common::Ok{};
}

common::Fallible RunnerCandidate::idle_call() {
  request(Op::IDLE, 5ms);
  request(Op::PING, 5ms);
  return common::Ok{};
}

CallOutcome RunnerCandidate::call(CallArgs&, void*) {
  CallOutcome out;
  request(Op::CALL, 5ms);
  request(Op::PING, 5ms);
  if (h_->rc != 0) {
    std::string message = runner::read_text(h_);
    out.failure = CallFailure{message.empty() ? "kernelrl_forward failed" : message};
  }
  return out;
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

// The runner must be back to its own threads between calls: any other is the candidate's, still
// running after the call that started it returned (or started at load): it could work before the
// clock, finish a call after it was timed, answer the doorbells in the loop's place or burn the CPU
// the reference is timed on. The kernel's count is read after the threads a call joined left it.
std::optional<std::string> RunnerCandidate::refusal_between_calls() {
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
