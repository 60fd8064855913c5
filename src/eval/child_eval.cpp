#include "eval/child_eval.hpp"

#include <pybind11/pybind11.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "common/line_io.hpp"
#include "eval/candidate.hpp"
#include "eval/check_outputs.hpp"
#if KERNELRL_EVAL_CUDA_KERNELS
#include "eval/device_check_kernels.hpp"
#endif
#include "eval/gpu.hpp"
#include "eval/held_memory.hpp"
#include "eval/host_runner.hpp"
#include "eval/op_audit.hpp"
#include "eval/tamper_guard.hpp"
#include "eval/time_limits.hpp"
#include "eval/timing.hpp"
#include "eval/torch_tensors.hpp"
#include "sandbox/child_process.hpp"
#include "sandbox/confinement.hpp"
#include "sandbox/syscall_filter.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

void to_json(nlohmann::json& j, const ChildRequest& r) {
  j = {{"op", r.op},
       {"artifact", r.artifact},
       {"candidate", r.candidate},
       {"format", common::to_string(r.format)},
       {"rules", common::to_string(r.rules)},
       {"options", r.options},
       {"device", r.device}};
  if (r.cached_ref) j["cached_ref"] = *r.cached_ref;
}

void from_json(const nlohmann::json& j, ChildRequest& r) {
  r.op = j.value("op", "eval");
  r.artifact = j.value("artifact", "");
  r.candidate = j.value("candidate", "");
  r.format = common::parse_format(j.value("format", "native")).value_or(common::Format::NATIVE);
  r.rules = common::parse_rule_set(j.value("rules", "strict")).value_or(common::RuleSet::STRICT);
  r.options = j.value("options", EvalOptions{});
  r.device = j.value("device", "cpu");
  if (j.contains("cached_ref")) r.cached_ref = j.at("cached_ref").get<TimingSummary>();
}

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t kHostMemoryHeadroomBytes = 8ull << 30;

std::uint64_t fresh_seed() {
  std::uint64_t s = 0;
  while (::getrandom(&s, sizeof s, 0) != static_cast<ssize_t>(sizeof s)) {
  }
  return s & ((1ull << 63) - 1);  // torch.manual_seed takes a non-negative int64
}

// The child's side of the worker's pipes: announces each phase and waits for the worker's grant
// (it may hold the device lock meanwhile), and sends the final record. The first phase after
// setup carries the limits of the later phases (eval/time_limits.hpp), before any candidate code
// runs; the worker takes the first such line only (sandbox::watch_child).
class Reporter {
 public:
  Reporter(int report_fd, int request_fd) : report_fd_(report_fd), request_fd_(request_fd) {}
  void phase(const std::string& name, const std::map<std::string, double>& limits_s = {}) {
    nlohmann::json line = {{"phase", name}};
    if (!limits_s.empty()) line["limits_s"] = limits_s;
    write_line(line);
    if (request_fd_ >= 0 && !sandbox::wait_for_grant(request_fd_)) _exit(0);  // the worker is gone
  }
  void final(const nlohmann::json& j) { write_line(j); }

 private:
  void write_line(const nlohmann::json& j) {
    common::write_all(report_fd_, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  int report_fd_, request_fd_;
};

// Milliseconds since `t0`.
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// Adds the milliseconds since `t0` to `phases[key]` and restarts `t0`: the steps inside a phase
// ("correctness.draw", "timing.redraw", ...), summed over its trials or calls.
void add_step(std::map<std::string, double>& phases, const std::string& key, clock_type::time_point& t0) {
  const auto now = clock_type::now();
  phases[key] += std::chrono::duration<double, std::milli>(now - t0).count();
  t0 = now;
}

// One correctness trial's tensors, reused by timing (which, defended, draws fresh inputs for
// every call). The reference's outputs are not kept anywhere the candidate could read them: an
// audited call's inputs are copied before the call and the reference runs on that copy after it.
struct InputSet {
  CallArgs args;
  std::vector<py::object> last_outputs;  // what the last call wrote or returned
};

struct Context {
  const task::TaskModule& task;
  const ChildRequest& req;
  Reporter& rep;
  py::module_ torch;
  py::object device;
  bool cuda = false;
  void* stream = nullptr;
  std::int64_t l2_bytes = 0;
  py::object model;
  py::object init_inputs;
  std::vector<py::object> params;
  std::vector<py::object> params_snapshot;
  std::vector<task::TensorSpec> output_specs;
  std::size_t call_tensor_bytes = 0;  // inputs, params and outputs of one call (the signature's)
  EvalResult result;
  nlohmann::json signature;
  std::optional<TamperGuard> guard;      // kernelbench: what the candidate's Python must leave alone
  std::optional<TorchOpAudit> op_audit;  // kernelbench: which PyTorch operators its calls run
  bool candidate_code_ran = false;       // from loading the candidate on: its code shares this process
  TaskWork work;                         // the task's draw and eager forward, timed in setup
};

struct TaskError {
  std::string message;
};

// A rule the candidate broke between calls (Candidate::refusal_between_calls): REJECTED.
struct CandidateRefused {
  std::string message;
};

void check_between_calls(Candidate& cand) {
  if (auto refused = cand.refusal_between_calls(); !refused.empty()) throw CandidateRefused{refused};
}

py::object call_reference(Context& c, const std::vector<py::object>& inputs) {
  py::object no_grad = c.torch.attr("no_grad")();
  no_grad.attr("__enter__")();
  py::tuple argv(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) argv[i] = inputs[i];
  py::object ret;
  try {
    ret = c.model(*argv);
  } catch (...) {
    no_grad.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  no_grad.attr("__exit__")(py::none(), py::none(), py::none());
  return ret;
}

// get_inputs() under a fresh seed. On a GPU with torch >= 2.0 it runs with the device as the
// default, so torch.randn & co. draw on the GPU: drawing 10^8 numbers on the CPU takes seconds,
// which would dominate the evaluation of large tasks.
std::vector<py::object> fresh_inputs(Context& c, std::uint64_t seed) {
  c.torch.attr("manual_seed")(seed);
  if (!c.cuda || !py::hasattr(c.torch, "set_default_device")) return to_device(c.task.get_inputs(), c.device);
  py::object scope = c.device;  // torch.device is a context manager since torch 2.0
  scope.attr("__enter__")();
  py::object values;
  try {
    values = c.task.get_inputs();
  } catch (...) {
    scope.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  scope.attr("__exit__")(py::none(), py::none(), py::none());
  return to_device(values, c.device);
}

std::vector<task::TensorSpec> specs_of(const std::vector<py::object>& tensors, const std::string& prefix) {
  std::vector<task::TensorSpec> specs;
  int i = 0;
  for (const auto& t : tensors) {
    if (!is_tensor(t)) continue;
    specs.push_back({prefix + " " + std::to_string(i++), shape_of(t), dtype_name(t)});
  }
  return specs;
}

// Device, stream, reference model and the task's signature. Throws TaskError when the task is at fault.
void setup(Context& c) {
  c.cuda = c.req.device == "cuda";
  c.device = c.torch.attr("device")(c.req.device);
  if (c.cuda) {
    if (!c.torch.attr("cuda").attr("is_available")().cast<bool>()) {
      throw TaskError{"CUDA was requested but torch sees no usable GPU in this process"};
    }
    c.torch.attr("cuda").attr("set_device")(0);
    auto stream = gpu::create_blocking_stream();
    if (!stream) throw TaskError{stream.error().message};
    c.stream = *stream;
    py::object ext = c.torch.attr("cuda").attr("ExternalStream")(reinterpret_cast<std::uintptr_t>(c.stream));
    c.torch.attr("cuda").attr("set_stream")(ext);
    auto facts = gpu::device_facts(0);
    if (!facts) throw TaskError{facts.error().message};
    c.l2_bytes = facts->l2_bytes;
    c.result.device_info = {{"name", facts->name},
                            {"compute_capability", std::to_string(facts->compute_capability_major) + "." +
                                                       std::to_string(facts->compute_capability_minor)},
                            {"n_sms", facts->n_sms},
                            {"l2_bytes", facts->l2_bytes},
                            {"memory_bytes", facts->memory_bytes},
                            {"driver_version", facts->driver_version},
                            {"runtime_version", facts->runtime_version}};
  }
  py::object backends = c.torch.attr("backends");
  backends.attr("cuda").attr("matmul").attr("allow_tf32") = c.req.options.allow_tf32;
  backends.attr("cudnn").attr("allow_tf32") = c.req.options.allow_tf32;
  c.result.versions["torch"] = py::str(c.torch.attr("__version__")).cast<std::string>();
  c.result.versions["python"] = py::str(py::module_::import("platform").attr("python_version")()).cast<std::string>();
  if (c.cuda) c.result.versions["torch_cuda"] = py::str(c.torch.attr("version").attr("cuda")).cast<std::string>();

  std::uint64_t init_seed = fresh_seed();
  c.result.seeds.push_back(init_seed);
  const std::string file = c.task.path.string();
  try {
    c.torch.attr("manual_seed")(init_seed);
    c.init_inputs = c.task.get_init_inputs();
    c.model = c.task.model_class(*c.init_inputs).attr("to")(c.device).attr("eval")();
  } catch (py::error_already_set& e) {
    throw TaskError{file + ": Model(*get_init_inputs()) raised: " + task::format_python_error(e.what(), file)};
  }
  py::object state = c.model.attr("state_dict")();
  std::vector<task::TensorSpec> param_specs;
  for (auto item : state.attr("items")()) {
    py::object t = py::reinterpret_borrow<py::object>(item[py::int_(1)]);
    c.params.push_back(t);
    param_specs.push_back({py::str(item[py::int_(0)]).cast<std::string>(), shape_of(t), dtype_name(t)});
  }
  c.params_snapshot = clone_all(c.params);

  std::vector<py::object> inputs;
  py::object ret;
  try {
    auto t_step = clock_type::now();
    inputs = fresh_inputs(c, fresh_seed());
    add_step(c.result.phases_ms, "setup.draw", t_step);
    ret = call_reference(c, inputs);
    if (c.cuda) c.torch.attr("cuda").attr("synchronize")();
    add_step(c.result.phases_ms, "setup.reference", t_step);
  } catch (py::error_already_set& e) {
    throw TaskError{file + ": the reference forward raised: " + task::format_python_error(e.what(), file)};
  }
  std::vector<py::object> outs = output_list(ret);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!is_tensor(outs[i])) throw TaskError{file + ": forward returns a non-tensor value (output " + std::to_string(i) + ")"};
  }
  c.output_specs = specs_of(outs, "output");
  for (auto& o : outs) poison(o);  // the reference's outputs never linger readable
  c.work = {c.result.phases_ms["setup.draw"], c.result.phases_ms["setup.reference"]};

  task::Signature sig;
  sig.inputs = specs_of(inputs, "input");
  sig.params = param_specs;
  sig.outputs = c.output_specs;
  for (auto v : c.init_inputs) sig.init_inputs.push_back(py::repr(v).cast<std::string>());
  c.signature = task::to_json(sig);
  for (const auto* specs : {&sig.inputs, &sig.params, &sig.outputs}) {
    for (const auto& spec : *specs) {
      std::size_t n = 1;
      for (auto d : spec.shape) n *= static_cast<std::size_t>(std::max<std::int64_t>(d, 0));
      auto dtype = parse_dtype(spec.dtype);
      c.call_tensor_bytes += (n * (dtype ? element_size_bytes(*dtype) : 8) + 63) / 64 * 64;
    }
  }
}

py::object empty_like_spec(Context& c, const task::TensorSpec& s) {
  py::list shape;
  for (auto d : s.shape) shape.append(d);
  py::object dtype = c.torch.attr(s.dtype.c_str());
  py::dict kw;
  kw["dtype"] = dtype;
  kw["device"] = c.device;
  return c.torch.attr("empty")(shape, **kw);
}

// check_outputs, with an output that cannot even be compared (an exotic dtype, a tensor torch
// refuses to copy) reported as wrong rather than as a failure of the evaluation.
OutputCheck checked_outputs(const std::vector<py::object>& actual, const std::vector<py::object>& expected,
                            const EvalOptions& options) {
  try {
    return check_outputs(actual, expected, options);
  } catch (py::error_already_set& e) {
    OutputCheck bad;
    bad.details.message = std::string("the outputs cannot be compared: ") + e.what();
    return bad;
  } catch (const std::exception& e) {
    OutputCheck bad;
    bad.details.message = std::string("the outputs cannot be compared: ") + e.what();
    return bad;
  }
}

enum class CallKind { TRIAL, TIMED };

// True (with the result REJECTED) when a kernelbench candidate changed what TamperGuard watches.
bool tampered(Context& c) {
  if (!c.guard) return false;
  const std::string change = c.guard->first_change();
  if (change.empty()) return false;
  c.result.status = common::Status::REJECTED;
  c.result.error.message = "the candidate changed the interpreter it shares with the reference and the checker: " +
                           change + " (kernelbench modules may not patch torch, the task or global settings)";
  return true;
}

// The verdict on one candidate call: its inputs and the model's parameters exactly as they were,
// then the reference run on the untouched copy of the inputs and every output compared with the
// candidate's; the reference's outputs are poisoned right after. Fills in the result (messages
// say "while being timed" for a timed call) and returns false when the call is not correct.
bool judge_call(Context& c, const std::vector<py::object>& inputs, const std::vector<py::object>& pristine,
                const std::vector<py::object>& actual, CallKind kind, int trial) {
  const std::string when = kind == CallKind::TIMED ? " while being timed" : "";
  if (tampered(c)) return false;
  auto wrong = [&](const std::string& message, int index) {
    c.result.status = common::Status::WRONG_OUTPUT;
    c.result.error.message = message;
    if (index >= 0) c.result.error.output_index = index;
    c.result.error.trial = trial;
    return false;
  };
  const bool defended = c.req.options.defenses;
  const std::string step = kind == CallKind::TIMED ? "audit." : "correctness.";
  auto t_step = clock_type::now();
  if (auto bad = defended ? first_changed(inputs, pristine) : -1; bad >= 0) {
    return wrong("the candidate modified input " + std::to_string(bad) + when + " (inputs are read-only)", bad);
  }
  if (auto bad = defended ? first_changed(c.params, c.params_snapshot) : -1; bad >= 0) {
    return wrong("the candidate modified parameter " + std::to_string(bad) + when + " (parameters are read-only)", -1);
  }
  add_step(c.result.phases_ms, step + "inputs_unchanged", t_step);
  std::vector<py::object> expected;
  try {
    expected = output_list(call_reference(c, pristine));
  } catch (py::error_already_set& e) {
    // The reference ran cleanly during setup, so a failure now follows from what the candidate did.
    c.result.status = common::Status::RUNTIME_ERROR;
    c.result.error.message = "the reference failed after the candidate ran" + when + ": " +
                             task::format_python_error(e.what(), "");
    c.result.error.trial = trial;
    return false;
  }
  add_step(c.result.phases_ms, step + "reference", t_step);
  OutputCheck check = checked_outputs(actual, expected, c.req.options);
  if (defended) {
    for (auto& o : expected) poison(o);  // the reference's outputs never stay readable on the device
  }
  add_step(c.result.phases_ms, step + "compare", t_step);
  c.result.tolerance = check.tolerance;
  if (!check.ok) {
    c.result.status = common::Status::WRONG_OUTPUT;
    c.result.error = check.details;
    if (kind == CallKind::TIMED) c.result.error.message = "outputs of timed calls are wrong: " + check.details.message;
    c.result.error.trial = trial;
    return false;
  }
  return true;
}

// The call's tensors where the candidate reads them (Candidate::stage). Throws TaskError when they
// do not fit: the task's inputs grew after its signature was taken.
void stage(Candidate& cand, InputSet& set) {
  check_between_calls(cand);
  if (auto err = cand.stage(set.args); !err.empty()) throw TaskError{err};
}

// Runs one trial: fresh inputs, poisoned outputs, the candidate first, then the reference on an
// untouched copy. Returns false (with the result filled in) when the candidate failed.
bool run_trial(Context& c, Candidate& cand, int trial, InputSet& set) {
  auto t_step = clock_type::now();
  std::uint64_t seed = fresh_seed();
  c.result.seeds.push_back(seed);
  set.args.inputs = fresh_inputs(c, seed);
  std::vector<py::object> pristine = clone_all(set.args.inputs);
  set.args.input_views = make_views(set.args.inputs);
  if (cand.uses_preallocated_outputs()) {
    set.args.outputs.clear();
    for (const auto& s : c.output_specs) set.args.outputs.push_back(empty_like_spec(c, s));
    set.args.output_views = make_views(set.args.outputs);
  }
  if (c.req.options.defenses) {
    for (auto& o : set.args.outputs) poison(o);
  }
  stage(cand, set);
  std::optional<gpu::DeviceMemory> memory_before;
  if (c.cuda) {
    if (auto s = gpu::synchronize_and_check(); !s) throw TaskError{"CUDA failed before the candidate ran: " + s.error().message};
    if (c.req.options.defenses) {
      auto m = gpu::device_memory();
      if (!m) throw TaskError{"cannot read the device's free memory: " + m.error().message};
      memory_before = *m;
    }
  }
  add_step(c.result.phases_ms, "correctness.draw", t_step);

  CallOutcome outcome;
  std::vector<std::string> refused;
  if (c.op_audit) {
    refused = c.op_audit->refused_ops_during([&] { outcome = cand.call(set.args, c.stream); });
  } else {
    outcome = cand.call(set.args, c.stream);
  }
  if (!refused.empty()) {
    std::string names;
    for (const auto& op : refused) names += (names.empty() ? "" : ", ") + op;
    c.result.status = common::Status::REJECTED;
    c.result.error.message = "ModelNew.forward ran PyTorch operators instead of the candidate's own kernels: " + names +
                             " (kernelbench candidates may use torch only to allocate, view, copy or fill tensors)";
    c.result.error.trial = trial;
    return false;
  }
  if (outcome.error.empty() && c.cuda) {
    if (auto s = gpu::synchronize_and_check(); !s) outcome.error = "CUDA error after the candidate's call: " + s.error().message;
  }
  if (outcome.error.empty() && memory_before) {  // eval/held_memory.hpp
    auto after = gpu::device_memory();
    if (!after) throw TaskError{"cannot read the device's free memory: " + after.error().message};
    const auto limit = held_memory_limit(memory_before->total_bytes, c.req.options.max_held_device_mb);
    std::uint64_t confirmed = after->free_bytes;
    if (held_beyond(memory_before->free_bytes, after->free_bytes, limit)) {  // ours, or another's for a moment?
      std::this_thread::sleep_for(kConfirmDelay);
      auto again = gpu::device_memory();
      if (!again) throw TaskError{"cannot read the device's free memory: " + again.error().message};
      confirmed = again->free_bytes;
    }
    if (auto refused = held_memory_refusal(memory_before->free_bytes, after->free_bytes, confirmed, limit)) {
      c.result.status = common::Status::REJECTED;
      c.result.error.message = *refused;
      c.result.error.trial = trial;
      return false;
    }
  }
  add_step(c.result.phases_ms, "correctness.candidate", t_step);
  if (!outcome.error.empty()) {
    c.result.status = outcome.rule_broken ? common::Status::REJECTED : common::Status::RUNTIME_ERROR;
    c.result.error.message = outcome.error;
    c.result.error.trial = trial;
    return false;
  }
  cand.collect(set.args);
  check_between_calls(cand);
  std::vector<py::object> actual = cand.uses_preallocated_outputs() ? set.args.outputs : outcome.outputs;
  set.last_outputs = actual;

  return judge_call(c, set.args.inputs, pristine, actual, CallKind::TRIAL, trial);
}

// Times the eager reference on `inputs_for(rep)` with the candidate's protocol. Throws TaskError
// when the reference fails.
TimingSummary time_reference(Context& c, CallTimer& timer,
                             const std::function<const std::vector<py::object>&(int rep)>& inputs_for) {
  auto times = timer.run(
      [&](int rep) {
        try {
          call_reference(c, inputs_for(rep));
        } catch (py::error_already_set& e) {
          return std::string("the reference raised: ") + e.what();
        }
        return std::string();
      },
      c.req.options);
  if (!times) throw TaskError{"timing the reference failed: " + times.error().message};
  return summarize_ms(*times);
}

std::string call_for_timing(Context& c, Candidate& cand, InputSet& set) {
  CallOutcome o = cand.call(set.args, c.stream);
  if (!o.error.empty()) return o.error;
  if (!cand.uses_preallocated_outputs()) set.last_outputs = std::move(o.outputs);
  return "";
}

// Before every warm-up and timed call (outside the timed region, defended): the outputs poisoned
// again, and fresh inputs from get_inputs() under a new seed in place of the set's (a candidate
// that caches its answer by input pointer, shape, sampled values or call count answers stale). An
// audited call also gets an untouched copy of them, returned; any other call costs no copy.
std::vector<py::object> redraw_inputs(Context& c, InputSet& set, bool audited) {
  for (auto& o : set.args.outputs) poison(o);
  std::vector<py::object> fresh = fresh_inputs(c, fresh_seed());
  for (std::size_t i = 0; i < fresh.size() && i < set.args.inputs.size(); ++i) {
    if (is_tensor(fresh[i])) set.args.inputs[i] = fresh[i];
  }
  set.args.input_views = make_views(set.args.inputs);
  return audited ? clone_all(set.args.inputs) : std::vector<py::object>{};
}

// Which timed calls are audited: each with probability kAuditProbability, from getrandom(), so a
// candidate cannot tell an audited call from another; at this rate one that cheats on half of 100
// timed calls is missed with probability 0.9^50 (0.5%). After timing, one more call per set, drawn
// and run like a timed one, is always audited (the only audit when few calls fit the budget).
constexpr double kAuditProbability = 0.1;

std::vector<bool> draw_audits(int n_reps) {
  std::vector<bool> audited(static_cast<std::size_t>(std::max(0, n_reps)));
  const auto threshold = static_cast<std::uint64_t>(kAuditProbability * static_cast<double>(1ull << 63));
  for (std::size_t i = 0; i < audited.size(); ++i) audited[i] = fresh_seed() < threshold;
  return audited;
}

// Audits one call: inputs and parameters unchanged, outputs matching the reference run on the
// copy taken before the call (judge_call, "while being timed").
// Counted in `isolation.audited_calls` when it passes.
bool audit_call(Context& c, Candidate& cand, InputSet& set, const std::vector<py::object>& pristine) {
  cand.collect(set.args);
  check_between_calls(cand);
  if (!judge_call(c, set.args.inputs, pristine, set.last_outputs, CallKind::TIMED, -1)) return false;
  c.result.isolation["audited_calls"] = c.result.isolation.value("audited_calls", 0) + 1;
  return true;
}

// After timing: one more call per set, prepared and run like a timed call (fresh inputs, poisoned
// outputs, L2 flush), then audited. Returns false with the result filled in when one fails.
bool final_audits(Context& c, Candidate& cand, CallTimer& timer, std::vector<InputSet>& sets) {
  for (auto& set : sets) {
    std::vector<py::object> pristine = redraw_inputs(c, set, true);
    stage(cand, set);
    std::vector<std::string> refused;  // kernelbench: the operator audit covers these calls too
    std::string err = timer.call_untimed(
        [&] {
          if (!c.op_audit) return call_for_timing(c, cand, set);
          std::string call_err;
          refused = c.op_audit->refused_ops_during([&] { call_err = call_for_timing(c, cand, set); });
          return call_err;
        },
        c.req.options);
    if (!refused.empty()) {
      std::string names;
      for (const auto& op : refused) names += (names.empty() ? "" : ", ") + op;
      c.result.status = common::Status::REJECTED;
      c.result.error.message = "ModelNew.forward ran PyTorch operators after timing (the last audited call) instead "
                               "of the candidate's own kernels: " + names;
      return false;
    }
    if (!err.empty()) {
      c.result.status = common::Status::RUNTIME_ERROR;
      c.result.error.message = "failed while timing: " + err;
      return false;
    }
    if (!audit_call(c, cand, set, pristine)) return false;
  }
  return true;
}

// Times the candidate over the sets (rotating), audits timed calls at random and one more call per
// set after timing. The reference, unless the run already measured it, is timed the same way in
// the same loop: each timed candidate call is followed by a timed reference call on the same
// inputs (CallTimer::run_paired), so a drift of the machine reaches both medians alike.
void timing(Context& c, Candidate& cand, std::vector<InputSet>& sets) {
  auto timer = CallTimer::create(c.cuda, c.stream, c.l2_bytes);
  if (!timer) throw TaskError{"cannot set up the timer: " + timer.error().message};
  const bool defended = c.req.options.defenses;
  const std::vector<bool> audited = defended ? draw_audits(c.req.options.max_reps) : std::vector<bool>{};
  int n_prepared = 0;  // warm-up calls first, then timed ones
  std::vector<py::object> pristine;
  bool audit_failed = false;
  auto t0 = clock_type::now();
  // A kernelbench timed call audited at random also runs under the operator audit, so PyTorch
  // operators used only outside the correctness trials are seen; the mode's overhead would be
  // timed, so those calls' times are left out of the median (the candidate cannot tell which
  // calls they are).
  std::vector<int> operator_audited;  // timed reps run under the operator audit
  std::string refused_in_timed_call;
  const auto candidate_call = [&](int rep) {
    InputSet& set = sets[rep % sets.size()];
    if (!c.op_audit || pristine.empty()) return call_for_timing(c, cand, set);
    std::string err;
    const auto refused = c.op_audit->refused_ops_during([&] { err = call_for_timing(c, cand, set); });
    operator_audited.push_back(rep);
    for (const auto& op : refused) refused_in_timed_call += (refused_in_timed_call.empty() ? "" : ", ") + op;
    return refused.empty() ? err : std::string("PyTorch operators in a timed call");
  };
  std::string reference_error;  // the task's failure, not the candidate's
  const auto reference_call = [&](int rep) {  // its warm-up and timed calls: step timing.reference
    auto t_step = clock_type::now();
    try {
      call_reference(c, sets[rep % sets.size()].args.inputs);
    } catch (py::error_already_set& e) {
      reference_error = std::string("the reference raised: ") + e.what();
      return reference_error;
    }
    add_step(c.result.phases_ms, "timing.reference", t_step);
    return std::string();
  };
  const std::function<void(int)> prepare = [&](int rep) {
    auto t_step = clock_type::now();
    if (defended) {
      const int timed_rep = n_prepared++ - c.req.options.n_warmup;
      const bool audit = timed_rep >= 0 && static_cast<std::size_t>(timed_rep) < audited.size() && audited[timed_rep];
      pristine = redraw_inputs(c, sets[rep % sets.size()], audit);
    }
    stage(cand, sets[rep % sets.size()]);
    add_step(c.result.phases_ms, "timing.redraw", t_step);
  };
  const std::function<std::string(int)> after = [&](int rep) {
    if (pristine.empty()) return std::string();
    auto t_step = clock_type::now();
    audit_failed = !audit_call(c, cand, sets[rep % sets.size()], pristine);
    pristine.clear();
    add_step(c.result.phases_ms, "timing.audits", t_step);
    if (audit_failed) {
      c.result.error.message += " (timed call " + std::to_string(rep + 1) + ", audited at random)";
      return std::string("a timed call failed its audit");
    }
    return std::string();
  };
  std::optional<std::vector<double>> ref_times;
  common::Expected<std::vector<double>> times = std::vector<double>{};
  if (c.req.cached_ref) {
    times = (*timer)->run(candidate_call, c.req.options, prepare, after);
  } else {
    auto paired = (*timer)->run_paired(candidate_call, reference_call, c.req.options, prepare, after);
    if (!reference_error.empty()) throw TaskError{"timing the reference failed: " + reference_error};
    if (paired) {
      times = std::move(paired->a_ms);
      ref_times = std::move(paired->b_ms);
    } else {
      times = paired.error();
    }
  }
  if (audit_failed) return;  // judge_call filled in the result
  if (!refused_in_timed_call.empty()) {
    c.result.status = common::Status::REJECTED;
    c.result.error.message = "ModelNew.forward ran PyTorch operators in a timed call (audited at random) instead of "
                             "the candidate's own kernels: " + refused_in_timed_call +
                             " (kernelbench candidates may use torch only to allocate, view, copy or fill tensors)";
    return;
  }
  if (times && !operator_audited.empty() && operator_audited.size() < times->size()) {
    std::vector<double> kept;
    for (std::size_t i = 0; i < times->size(); ++i) {
      if (std::find(operator_audited.begin(), operator_audited.end(), static_cast<int>(i)) == operator_audited.end()) {
        kept.push_back((*times)[i]);
      }
    }
    *times = std::move(kept);
    c.result.isolation["operator_audited_timed_calls"] = operator_audited.size();
  }
  if (!times) {
    c.result.status = common::Status::RUNTIME_ERROR;
    c.result.error.message = "failed while timing: " + times.error().message;
    return;
  }
  c.result.phases_ms["timing"] = ms_since(t0);
  auto t_recheck = clock_type::now();
  bool rechecked = !defended || final_audits(c, cand, **timer, sets);
  c.result.phases_ms["recheck"] = ms_since(t_recheck);
  if (!rechecked) return;
  c.result.runtime = summarize_ms(*times);

  c.result.ref_runtime = c.req.cached_ref ? *c.req.cached_ref : summarize_ms(*ref_times);
  c.result.runtime_us = c.result.runtime.median_us;
  c.result.ref_runtime_us = c.result.ref_runtime.median_us;
  if (c.result.runtime_us > 0) c.result.speedup = c.result.ref_runtime_us / c.result.runtime_us;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// What makes a task useless for training, judged on two runs with different seeds: non-finite,
// nearly zero or nearly constant outputs, outputs that ignore the seed. Also the input size.
nlohmann::json task_health(Context& c, const std::vector<py::object>& inputs_a) {
  std::int64_t input_bytes = 0;
  for (const auto& t : inputs_a) {
    if (is_tensor(t)) input_bytes += t.attr("numel")().cast<std::int64_t>() * t.attr("element_size")().cast<std::int64_t>();
  }
  std::vector<py::object> out_a, out_b;
  try {
    out_a = output_list(call_reference(c, inputs_a));
    out_b = output_list(call_reference(c, fresh_inputs(c, fresh_seed())));
  } catch (py::error_already_set& e) {
    throw TaskError{c.task.path.string() + ": the reference forward raised: " + task::format_python_error(e.what(), "")};
  }
  nlohmann::json problems = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (std::size_t i = 0; i < out_a.size(); ++i) {
    const std::string name = "output " + std::to_string(i);
    py::object a = out_a[i].attr("detach")();
    const std::int64_t numel = a.attr("numel")().cast<std::int64_t>();
    nlohmann::json o = {{"numel", numel}};
    if (a.attr("is_floating_point")().cast<bool>() && numel > 0) {
      py::object d = a.attr("double")();
      const std::int64_t n_bad = numel - c.torch.attr("isfinite")(d).attr("sum")().attr("item")().cast<std::int64_t>();
      py::object finite = d.attr("nan_to_num")(0.0, 0.0, 0.0);
      const double max_abs = finite.attr("abs")().attr("max")().attr("item")().cast<double>();
      const double mean = finite.attr("mean")().attr("item")().cast<double>();
      const double std = numel > 1 ? finite.attr("std")().attr("item")().cast<double>() : 0.0;
      o.update({{"n_nonfinite", n_bad}, {"max_abs", max_abs}, {"mean", mean}, {"std", std}});
      if (n_bad > 0) problems.push_back(name + " has " + std::to_string(n_bad) + " NaN/inf values");
      if (max_abs < 1e-6) {
        problems.push_back(name + " is nearly zero (max |x| " + short_number(max_abs) + ")");
      } else if (numel > 1 && std <= 1e-6 * std::max(1.0, std::abs(mean))) {
        problems.push_back(name + " is nearly constant (std " + short_number(std) + ", mean " + short_number(mean) + ")");
      }
    }
    if (numel > 1 && bytes_equal(out_a[i], out_b[i])) problems.push_back(name + " does not change with the seed");
    outputs.push_back(o);
  }
  return {{"input_bytes", input_bytes}, {"outputs", outputs}, {"problems", problems}};
}

// Signature, health and eager reference time (`kernelrl tasks show`, `kernelrl tasks check`).
nlohmann::json task_info(Context& c) {
  std::vector<py::object> inputs = fresh_inputs(c, fresh_seed());
  nlohmann::json health = task_health(c, inputs);
  if (c.req.options.time_kernels) {
    auto timer = CallTimer::create(c.cuda, c.stream, c.l2_bytes);
    if (!timer) throw TaskError{"cannot set up the timer: " + timer.error().message};
    c.result.ref_runtime = time_reference(c, **timer, [&](int) -> auto& { return inputs; });
    c.result.ref_runtime_us = c.result.ref_runtime.median_us;
  }
  return health;
}

// From here on the process runs candidate code: no new processes, exec or network
// (sandbox/syscall_filter.hpp), no writes outside scratch (sandbox/write_confinement.hpp).
// Recorded in the result either way.
// Writes are confined to the child's scratch folder (its cwd) and /dev (GPU device files), plus
// CUDA's own JIT cache when it exists.
nlohmann::json confine_process(bool cuda) {
  nlohmann::json isolation;
  std::vector<std::string> writable{std::filesystem::current_path().string(), "/dev"};
  if (const char* home = std::getenv("HOME")) {
    std::error_code ec;
    if (std::filesystem::is_directory(std::string(home) + "/.nv", ec)) writable.push_back(std::string(home) + "/.nv");
  }
  auto confined = sandbox::confine_writes(writable);
  isolation["write_confinement"] = static_cast<bool>(confined);
  if (!confined) isolation["write_confinement_error"] = confined.error().message;
  auto installed = sandbox::install_syscall_filter();
  isolation["syscall_filter"] = static_cast<bool>(installed);
  if (!installed) isolation["syscall_filter_error"] = installed.error().message;
  // Host memory: on the CPU the address space may grow by kHostMemoryHeadroomBytes past what
  // setup needed. Not on a GPU: the CUDA driver reserves far more address space than it uses.
  if (!cuda) {
    auto limit = sandbox::limit_address_space_growth(kHostMemoryHeadroomBytes);
    if (limit) isolation["address_space_limit_bytes"] = *limit;
  }
  return isolation;
}

void restrict_system_calls(Context& c) {
  c.result.isolation["defenses"] = c.req.options.defenses;
  if (!c.req.options.defenses) return;
  c.result.isolation.update(confine_process(c.cuda));
}

// Host candidates run in a process of their own (eval/host_runner.hpp), forked before this one
// restricts itself; native and kernelbench candidates (CUDA, Python) run here.
bool in_separate_process(const Context& c) {
  return c.req.format == common::Format::HOST && c.req.options.defenses && c.req.options.separate_process;
}

LoadOutcome load_candidate(Context& c) {
  if (c.req.format == common::Format::KERNELBENCH) {
    restrict_system_calls(c);
    return load_kernelbench(c.req.artifact, c.req.candidate, c.init_inputs, c.device, c.result.seeds.front());
  }
  if (!in_separate_process(c)) {
    restrict_system_calls(c);
    return load_shared_object(c.req.artifact, c.params);
  }
  // Room for one call's tensors twice over: get_inputs() may draw sizes that vary a little.
  HostRunnerOptions options;
  options.tensor_bytes = 2 * c.call_tensor_bytes + (1u << 20);
  options.flush_caches = c.req.options.flush_l2;
  HostRunnerStart runner = start_host_runner(c.req.artifact, c.params, options, [] { return confine_process(false); });
  restrict_system_calls(c);
  c.result.isolation["candidate_process"] = runner.isolation;
  c.result.isolation["candidate_process"]["separate"] = true;
  return std::move(runner.loaded);
}

void evaluate(Context& c) {
  c.rep.phase("load", scaled_phase_limits_s(c.req.options, c.work));
  auto t_load = clock_type::now();
  c.result.isolation["file_size_limit_bytes"] = 64ll << 20;
  // Candidate code is filtered from its first instruction: a native or host library's
  // constructors, a kernelbench module's top-level code (its extensions were built by the
  // prebuild; here load_inline only loads them).
  if (c.req.format == common::Format::KERNELBENCH) {
    if (auto prepared = prepare_kernelbench_loading(c.req.artifact); !prepared) {
      c.result.status = common::Status::RUNTIME_ERROR;
      c.result.error.message = prepared.error().message;
      return;
    }
  }
  if (c.req.format == common::Format::KERNELBENCH) {
    settle_torch_lazy_state();  // done by the worker already, unless this child was forked before
    c.guard.emplace(c.task.module, c.task.model_class);
    c.result.isolation["tamper_guard"] = true;
    // KernelBench's acceptance lets PyTorch operators do part of the work; the strict rules do not.
    if (c.req.options.torch_op_audit && c.req.rules == common::RuleSet::STRICT) {
      auto audit = TorchOpAudit::create();
      c.result.isolation["torch_op_audit"] = static_cast<bool>(audit);
      if (audit) {
        c.op_audit.emplace(std::move(*audit));
      } else {
        c.result.isolation["torch_op_audit_error"] = audit.error().message;
      }
    }
  }
  c.candidate_code_ran = true;
  LoadOutcome loaded = load_candidate(c);
  c.result.phases_ms["load"] = ms_since(t_load);
  if (!loaded.candidate) {
    c.result.status = loaded.status;
    c.result.error.message = loaded.error;
    return;
  }
  if (tampered(c)) return;
  c.rep.phase("correctness");
  auto t_check = clock_type::now();
  const int n_keep = std::min(2, std::max(1, c.req.options.n_trials));
  std::vector<InputSet> sets(static_cast<std::size_t>(n_keep));
  for (int trial = 0; trial < c.req.options.n_trials; ++trial) {
    InputSet& set = sets[static_cast<std::size_t>(trial % n_keep)];
    if (!run_trial(c, *loaded.candidate, trial, set)) {
      c.result.phases_ms["correctness"] = ms_since(t_check);
      return;
    }
    if (trial == 0) c.result.phases_ms["correctness.first_trial"] = ms_since(t_check);
  }
  c.result.phases_ms["correctness"] = ms_since(t_check);
  c.result.status = common::Status::OK;
  c.result.correct = true;
  if (c.req.options.time_kernels) {
    c.rep.phase("timing");
    timing(c, *loaded.candidate, sets);
    if (c.result.status != common::Status::OK) c.result.correct = false;
  }
}

// evaluate(), where a failure of the evaluation itself after the candidate's code ran (a CUDA
// context it reset or broke, an interpreter it damaged) is the candidate's RUNTIME_ERROR with a
// record, never "could not evaluate": the task and the device were fine until then (setup ran the
// reference), and the candidate shares this process. Before that, failures stay the task's.
void evaluate_blaming_the_candidate(Context& c) {
  std::string failure;
  try {
    evaluate(c);
    return;
  } catch (const CandidateRefused& e) {
    c.result.status = common::Status::REJECTED;
    c.result.correct = false;
    c.result.speedup = 0;
    c.result.error.message = e.message;
    return;
  } catch (const TaskError& e) {
    if (!c.candidate_code_ran) throw;
    failure = e.message;
  } catch (py::error_already_set& e) {
    if (!c.candidate_code_ran) throw;
    failure = std::string("a Python error: ") + e.what();
  } catch (const std::exception& e) {
    if (!c.candidate_code_ran) throw;
    failure = e.what();
  }
  c.result.status = common::Status::RUNTIME_ERROR;
  c.result.correct = false;
  c.result.speedup = 0;
  c.result.error.message = "the evaluation failed after the candidate's code ran in its process (a CUDA context it "
                           "reset or broke counts against it): " + failure.substr(0, 600);
}

}  // namespace

void run_child(const task::TaskModule* task, const ChildRequest& req, int report_fd, int request_fd,
               const ChildStart& start) {
  Reporter rep(report_fd, request_fd);
  try {
    py::module_ torch = py::module_::import("torch");
    if (req.op == "device_info") {
      nlohmann::json info = {{"cuda_available", false}, {"torch", py::str(torch.attr("__version__")).cast<std::string>()}};
      if (gpu::device_count() > 0 && torch.attr("cuda").attr("is_available")().cast<bool>()) {
        auto facts = gpu::device_facts(0);
        if (facts) {
          info["cuda_available"] = true;
          info["name"] = facts->name;
          info["compute_capability"] =
              std::to_string(facts->compute_capability_major) + std::to_string(facts->compute_capability_minor);
          info["driver_version"] = facts->driver_version;
        }
      }
      rep.final({{"device_info", info}});
      return;
    }
    Context c{*task, req, rep, torch, py::none(), false, nullptr, 0, py::none(), py::none(), {}, {}, {}, 0, {}, {}, {}, {}, {}};
    c.result.device = req.device;
    c.result.phases_ms["device_wait"] = start.device_wait_ms;
    if (start.device_prepare_ms > 0) c.result.phases_ms["device_prepare"] = start.device_prepare_ms;
    if (start.task_load_ms > 0) c.result.phases_ms["task_load"] = start.task_load_ms;
    rep.phase("setup");
    auto t0 = clock_type::now();
    setup(c);
    c.result.phases_ms["setup"] = ms_since(t0);
    if (req.op == "task_info") {
      rep.phase("ref_timing", scaled_phase_limits_s(req.options, c.work));
      nlohmann::json health = task_info(c);
      rep.final({{"signature", c.signature}, {"result", c.result}, {"health", health}});
      return;
    }
    evaluate_blaming_the_candidate(c);
    nlohmann::json out = {{"result", c.result}, {"signature", c.signature}};
    // Only a clean evaluation's reference time is kept for later candidates: one measured beside a
    // candidate that broke a rule (a thread burning the CPU, ...) may be inflated.
    if (!req.cached_ref && c.result.ref_runtime.n > 0 && c.result.status == common::Status::OK) {
      out["ref_timing"] = c.result.ref_runtime;
    }
    rep.final(out);
  } catch (const TaskError& e) {
    rep.final({{"task_error", e.message}});
  } catch (py::error_already_set& e) {
    rep.final({{"task_error", std::string("unexpected Python error: ") + e.what()}});
  } catch (const std::exception& e) {
    rep.final({{"task_error", std::string("unexpected error: ") + e.what()}});
  }
}

void prepare_device(const std::string& device) {
  if (device != "cuda") return;
  try {
    py::module_ torch = py::module_::import("torch");
    if (!torch.attr("cuda").attr("is_available")().cast<bool>()) return;
    py::dict kw;
    kw["device"] = "cuda";
    torch.attr("zeros")(1, **kw);
    torch.attr("cuda").attr("synchronize")();
#if KERNELRL_EVAL_CUDA_KERNELS
    (void)gpu::preload_device_checks();  // a failure shows again, with its message, at the first check
#endif
  } catch (py::error_already_set&) {
    // run_child's setup meets the same failure and reports it
  }
}

void run_child_loading_task(const std::string& task_path, const ChildRequest& request, int report_fd,
                            int request_fd, ChildStart start) {
  if (request.op == "device_info") {
    run_child(nullptr, request, report_fd, request_fd);
    return;
  }
  const auto t0 = clock_type::now();
  auto task = task::load_task(task_path);
  if (!task) {
    Reporter(report_fd, -1).final({{"task_error", task.error().message}});
    return;
  }
  start.task_load_ms = ms_since(t0);
  run_child(&*task, request, report_fd, request_fd, start);
}

}  // namespace kernelrl::eval
