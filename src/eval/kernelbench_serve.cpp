#include "eval/kernelbench_serve.hpp"

#include <pybind11/pybind11.h>

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/call_recorder.hpp"
#include "eval/candidate.hpp"
#include "eval/dtype.hpp"
#include "eval/torch_tensors.hpp"
#include "runner/device_state.hpp"
#include "runner/protocol.hpp"
#include "runner/confine.hpp"
#include "sandbox/shared_pages.hpp"
#include "task/python_runtime.hpp"
#include "task/task.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using runner::Header;
using runner::Op;
using runner::TensorSlot;

// What START names: the evaluation this runner serves. The task itself is not imported here: its
// constructor arguments come as Python literals drawn by the child under the init seed.
struct RunnerArgs {
  std::size_t pages_bytes = 0;
  std::string entry_dir, display_name, init_inputs;
  std::string precision;  // EvalOptions::precision: "" or fp32|fp16|bf16
  bool allow_tf32 = false;  // EvalOptions::allow_tf32: the reference's TF32 setting, applied here too
  std::uint64_t init_seed = 0;
};

// One output of the last call, kept alive until the next: where its bytes are and how many.
struct ReturnedOutput {
  const void* data = nullptr;
  std::size_t bytes = 0;
  py::object keep;
};

std::size_t slot_bytes(const TensorSlot& s) {
  auto dtype = from_dlpack(DlpackType{s.dtype.code, s.dtype.bits});
  std::size_t n = dtype ? element_size_bytes(*dtype) : 0;
  for (int d = 0; d < s.ndim; ++d) n *= static_cast<std::size_t>(std::max<std::int64_t>(s.shape[d], 0));
  return n;
}

class KernelbenchServer {
 public:
  KernelbenchServer(pid_t parent, bool cuda) : parent_(parent), cuda_(cuda) {}

  // Before the evaluation is known: the CUDA context, torch's own set-up on the device, the
  // extension loaders, what records the calls below Python. An error text, or empty.
  std::string get_ready(nlohmann::json files_report);
  // START: the evaluation's pages (the header, on the CPU the data region after it), the arena, the
  // task's init inputs and the calls' confinement; the set-up report, or an error text.
  std::variant<nlohmann::json, std::string> set_up(Header* h, std::byte* pages, RunnerArgs args);
  [[noreturn]] void serve();

 private:
  std::int32_t load();
  std::int32_t build_args();
  std::int32_t call();
  std::int32_t collect();
  bool in_bounds(const TensorSlot& s) const {
    return s.ndim >= 0 && s.ndim <= runner::kMaxDims && s.offset <= data_bytes_ && slot_bytes(s) <= data_bytes_ - s.offset;
  }
  const TensorSlot* output_slots() const { return h_->slots + h_->n_inputs + h_->n_params; }
  // Whether the returned outputs fit the output slots (count, shapes, dtypes).
  bool outputs_fit(const std::vector<py::object>& outs) const;
  void report_returned(const std::vector<py::object>& outs);

  const pid_t parent_;
  const bool cuda_;
  Header* h_ = nullptr;
  RunnerArgs a_;
  nlohmann::json ahead_ms_ = nlohmann::json::object();  // get_ready's steps
  nlohmann::json ahead_report_ = nlohmann::json::object();
  std::byte* data_ = nullptr;
  std::size_t data_bytes_ = 0;
  int cuda_device_ = -1;
  runner::DeviceState device_state_;
  py::object device_, precision_, init_inputs_, tensor_type_, parameter_type_, literal_eval_;
  std::unique_ptr<audit::CallRecorder> recorder_;  // installed before the candidate's code is loaded
  std::unique_ptr<Candidate> candidate_;
  CallArgs args_;
  std::vector<ReturnedOutput> returned_;
};

// The shared libraries of the candidate's extensions (the prebuild built them below its folder):
// their kernels are the candidate's own.
std::vector<std::filesystem::path> extension_libraries(const std::string& entry_dir) {
  std::vector<std::filesystem::path> libraries;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(entry_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".so") libraries.push_back(it->path());
  }
  return libraries;
}

// Each step's wall time goes to the report: what the runner's start costs, and where (`ahead_ms`:
// before the evaluation was known; `set_up_ms`: on the evaluation's path).
class StepClock {
 public:
  explicit StepClock(nlohmann::json& steps) : steps_(steps) {}
  void operator()(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    steps_[name] = std::chrono::duration<double, std::milli>(now - t_).count();
    t_ = now;
  }

 private:
  nlohmann::json& steps_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

std::string KernelbenchServer::get_ready(nlohmann::json files_report) {
  ahead_report_ = std::move(files_report);
  StepClock step(ahead_ms_);
  if (cuda_) {
    cudaError_t e = cudaFree(nullptr);  // this process's context on the current device
    if (e != cudaSuccess) return std::string("cannot create a CUDA context: ") + cudaGetErrorString(e);
  }
  step("context");
  // Before any candidate code: the operators of every call, recorded below Python (the kernels'
  // launches once START names the candidate's libraries).
  auto recorder = audit::CallRecorder::install();
  if (!recorder) return "cannot record the candidate's calls: " + recorder.error().message;
  recorder_ = std::move(*recorder);
  step("call_recorder");
  try {
    py::module_ torch = py::module_::import("torch");
    // torch's own set-up (its CUDA state, the CPU thread pool) before the child counts the threads.
    py::dict on;
    on["device"] = cuda_ ? "cuda" : "cpu";
    torch.attr("ones")(1 << 22, **on).attr("sum")().attr("item")();
    step("torch_device");
    if (auto prepared = prepare_kernelbench_loading(); !prepared) return prepared.error().message;
    step("extension_loaders");
    // Held from before the candidate's code runs: it may rebind torch.Tensor, not these references.
    tensor_type_ = torch.attr("Tensor");
    parameter_type_ = torch.attr("nn").attr("Parameter");
    literal_eval_ = py::module_::import("ast").attr("literal_eval");
  } catch (py::error_already_set& e) {
    return std::string("cannot set up the candidate's interpreter: ") + e.what();
  }
  return {};
}

std::variant<nlohmann::json, std::string> KernelbenchServer::set_up(Header* h, std::byte* pages, RunnerArgs args) {
  h_ = h;
  a_ = std::move(args);
  nlohmann::json steps = nlohmann::json::object();
  StepClock step(steps);
  if (cuda_) {
    void* arena = nullptr;
    const std::string failed = runner::set_up_device(h_, device_state_, arena);
    if (!failed.empty()) return failed;
    data_ = static_cast<std::byte*>(arena);
    data_bytes_ = h_->arena_bytes;
    cuda_device_ = h_->device;
  } else {
    data_ = pages + runner::kDataOffset;
    data_bytes_ = a_.pages_bytes - runner::kDataOffset;
  }
  step("device");
  nlohmann::json report = ahead_report_;
  try {
    py::module_ torch = py::module_::import("torch");
    if (cuda_) {
      torch.attr("cuda").attr("set_device")(cuda_device_);
      device_ = torch.attr("device")("cuda:" + std::to_string(cuda_device_));
    } else {
      device_ = torch.attr("device")("cpu");
    }
    init_inputs_ = literal_eval_(a_.init_inputs);
    precision_ = precision_dtype(a_.precision);
    // The numerics the reference runs under (child_setup.cpp): PyTorch operators a solution keeps
    // (a convolution before its fused epilogue) compute as the reference's do. torch's own default
    // lets cuDNN use TF32, which put every such output ~1e-3 off a reference without it.
    py::object backends = torch.attr("backends");
    backends.attr("cuda").attr("matmul").attr("allow_tf32") = a_.allow_tf32;
    backends.attr("cudnn").attr("allow_tf32") = a_.allow_tf32;
    step("init_inputs");
  } catch (py::error_already_set& e) {
    return std::string("cannot set up the candidate's interpreter: ") + e.what();
  } catch (const std::invalid_argument& e) {
    return std::string("START: ") + e.what();
  }
  if (cuda_) {
    if (auto watched = recorder_->watch_launches(extension_libraries(a_.entry_dir)); !watched) {
      return "cannot record the candidate's GPU launches: " + watched.error().message;
    }
    step("launch_audit");
  }
  report.update(recorder_->report());
  report["allow_tf32"] = a_.allow_tf32;
  report.update(runner::confine_calls(!cuda_));
  step("confinement");
  report["started_ahead"] = true;
  report["ahead_ms"] = ahead_ms_;
  report["set_up_ms"] = steps;
  return report;
}

std::int32_t KernelbenchServer::load() {
  LoadOutcome out = load_kernelbench(a_.entry_dir, a_.display_name, init_inputs_, device_, precision_, a_.init_seed);
  if (out.candidate) {
    candidate_ = std::move(out.candidate);
    return runner::kLoaded;
  }
  runner::write_text(h_, out.error);
  return out.status == common::Status::FORMAT_ERROR ? runner::kNoEntryPoint : runner::kCannotLoad;
}

// The text is a JSON array, one entry per argument of forward: {"slot": k} (input slot k) or
// {"literal": "repr"} (a value that is not a tensor, rebuilt by ast.literal_eval).
std::int32_t KernelbenchServer::build_args() {
  auto fail = [this](const std::string& why) {
    runner::write_text(h_, "the call's arguments: " + why);
    return 1;
  };
  const nlohmann::json list = nlohmann::json::parse(runner::read_text(h_), nullptr, false);
  if (!list.is_array()) return fail("not a JSON array");
  if (h_->n_inputs < 0 || h_->n_inputs > runner::kMaxTensors) return fail("bad input count");
  args_.inputs.clear();
  try {
    for (const auto& entry : list) {
      if (entry.contains("slot")) {
        const int k = entry["slot"].get<int>();
        if (k < 0 || k >= h_->n_inputs || !in_bounds(h_->slots[k])) return fail("slot out of range");
        const TensorSlot& s = h_->slots[k];
        auto dtype = from_dlpack(DlpackType{s.dtype.code, s.dtype.bits});
        if (!dtype) return fail("unsupported dtype");
        args_.inputs.push_back(tensor_at(data_ + s.offset, std::vector<std::int64_t>(s.shape, s.shape + s.ndim),
                                         *dtype, cuda_device_));
      } else {
        args_.inputs.push_back(literal_eval_(entry.at("literal").get<std::string>()));
      }
    }
  } catch (py::error_already_set& e) {
    return fail(e.what());
  } catch (const nlohmann::json::exception& e) {
    return fail(e.what());
  }
  return 0;
}

bool KernelbenchServer::outputs_fit(const std::vector<py::object>& outs) const {
  if (outs.size() != static_cast<std::size_t>(h_->n_outputs)) return false;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const TensorSlot& s = output_slots()[i];
    if (!is_tensor(outs[i]) || !in_bounds(s)) return false;
    if (shape_of(outs[i]) != std::vector<std::int64_t>(s.shape, s.shape + s.ndim)) return false;
    auto dtype = from_dlpack(DlpackType{s.dtype.code, s.dtype.bits});
    if (!dtype || dtype_name(outs[i]) != to_string(*dtype)) return false;
  }
  return true;
}

void KernelbenchServer::report_returned(const std::vector<py::object>& outs) {
  h_->n_returned = static_cast<std::int32_t>(std::min<std::size_t>(outs.size(), runner::kMaxReturned));
  for (int i = 0; i < h_->n_returned; ++i) {
    TensorSlot& r = h_->returned[i];
    r = TensorSlot{};
    r.ndim = -1;
    const py::object& o = outs[static_cast<std::size_t>(i)];
    if (!is_tensor(o)) continue;
    const auto shape = shape_of(o);
    auto dtype = parse_dtype(dtype_name(o));
    if (!dtype || shape.size() > static_cast<std::size_t>(runner::kMaxDims)) continue;
    const auto dl = to_dlpack(*dtype);
    r.dtype = DLDataType{dl.code, dl.bits, 1};
    r.ndim = static_cast<std::int32_t>(shape.size());
    std::copy(shape.begin(), shape.end(), r.shape);
  }
}

// Everything the candidate does for this call happens before the answer: forward, the checks of
// what it returned, the contiguous copies, the whole context synchronised. Every call is recorded
// below Python the same way (audit/call_recorder.hpp), so no call can be told from an audited one.
std::int32_t KernelbenchServer::call() {
  h_->n_returned = 0;
  returned_.clear();
  if (!candidate_) {
    runner::write_text(h_, "no candidate was loaded");
    return runner::kCallFailed;
  }
  std::int32_t rc = runner::kCallDone;
  if (cuda_) runner::flush_device(&device_state_);
  if (recorder_) recorder_->begin_call(cuda_ ? device_state_.stream : nullptr);
  try {
    CallOutcome outcome = candidate_->call(args_, nullptr);
    if (outcome.failure) {
      runner::write_text(h_, outcome.failure->message);
      rc = outcome.failure->rule_broken ? runner::kCallRefused : runner::kCallFailed;
    } else {
      // A subclass of torch.Tensor by the type object itself (no isinstance hook of the candidate's).
      for (std::size_t i = 0; i < outcome.outputs.size() && rc == runner::kCallDone; ++i) {
        PyTypeObject* type = Py_TYPE(outcome.outputs[i].ptr());
        if (PyType_IsSubtype(type, reinterpret_cast<PyTypeObject*>(tensor_type_.ptr())) &&
            type != reinterpret_cast<PyTypeObject*>(tensor_type_.ptr()) &&
            type != reinterpret_cast<PyTypeObject*>(parameter_type_.ptr())) {
          runner::write_text(h_, "ModelNew.forward returned a torch.Tensor subclass as output " + std::to_string(i) +
                                     ": outputs must be plain torch.Tensor objects");
          rc = runner::kCallRefused;
        }
      }
      if (rc == runner::kCallDone && !outputs_fit(outcome.outputs)) {
        report_returned(outcome.outputs);
        rc = runner::kCallWrongOutputs;
      }
      for (std::size_t i = 0; rc == runner::kCallDone && i < outcome.outputs.size(); ++i) {
        py::object t = outcome.outputs[i];
        if (!py::object(t.attr("device")).equal(device_) || !t.attr("is_contiguous")().cast<bool>()) {
          t = t.attr("to")(device_).attr("contiguous")();
        }
        ReturnedOutput out;
        out.data = reinterpret_cast<const void*>(t.attr("data_ptr")().cast<std::uintptr_t>());
        out.bytes = slot_bytes(output_slots()[i]);
        out.keep = t;
        returned_.push_back(std::move(out));
      }
    }
  } catch (py::error_already_set& e) {
    runner::write_text(h_, std::string("ModelNew's call failed: ") + task::format_python_error(e.what(), ""));
    rc = runner::kCallFailed;
    returned_.clear();
  }
  if (cuda_) {
    if (const char* failed = runner::finish_device(&device_state_)) {
      runner::write_text(h_, failed);
      rc = runner::kCallFailed;
      returned_.clear();
    }
  }
  return rc;
}

// The last call's outputs into the output slots: plain copies, no Python.
std::int32_t KernelbenchServer::collect() {
  if (returned_.size() != static_cast<std::size_t>(h_->n_outputs)) {
    runner::write_text(h_, "no outputs of a completed call to collect");
    return 1;
  }
  for (std::size_t i = 0; i < returned_.size(); ++i) {
    const TensorSlot& s = output_slots()[i];
    if (!in_bounds(s) || slot_bytes(s) != returned_[i].bytes) {
      runner::write_text(h_, "the output slots were changed outside the evaluator");
      return 1;
    }
    if (returned_[i].bytes == 0) continue;
    if (!cuda_) {
      std::memcpy(data_ + s.offset, returned_[i].data, returned_[i].bytes);
    } else if (cudaMemcpyAsync(data_ + s.offset, returned_[i].data, returned_[i].bytes, cudaMemcpyDefault,
                               device_state_.stream) != cudaSuccess) {
      break;  // the error is read below
    }
  }
  if (cuda_) {
    cudaError_t e = cudaStreamSynchronize(device_state_.stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
      runner::write_text(h_, std::string("copying the candidate's outputs failed: ") + cudaGetErrorString(e));
      return 1;
    }
  }
  return 0;
}

void KernelbenchServer::serve() {
  std::uint32_t seq = 1;
  for (;;) {
    ++seq;
    if (!runner::wait_for_request(h_, seq, parent_)) _exit(1);
    switch (h_->op) {
      case Op::LOAD:
        h_->rc = load();
        break;
      case Op::ARGS:
        h_->rc = build_args();
        break;
      case Op::CALL:
        h_->rc = call();
        break;
      case Op::IDLE:
        if (cuda_) {
          runner::flush_device(&device_state_);
          runner::finish_device(&device_state_);  // a broken context is the next call's to report
        }
        h_->rc = 0;
        break;
      case Op::COLLECT:
        h_->rc = collect();
        break;
      case Op::RECORD:  // outside the timed call: the record's own checks cost time
        runner::write_audit_text(h_, recorder_ ? recorder_->end_call().dump() : std::string("{}"));
        h_->rc = 0;
        break;
      default:
        std::fflush(nullptr);
        _exit(0);
    }
    runner::answer(h_, seq);
  }
}

// START's text: {"entry_dir", "display_name", "init_inputs", "init_seed", "pages_bytes", "precision"?,
// "allow_tf32"?}.
std::variant<RunnerArgs, std::string> read_start(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  RunnerArgs a;
  try {
    a.entry_dir = j.at("entry_dir").get<std::string>();
    a.display_name = j.at("display_name").get<std::string>();
    a.init_inputs = j.at("init_inputs").get<std::string>();
    a.init_seed = j.at("init_seed").get<std::uint64_t>();
    a.pages_bytes = j.at("pages_bytes").get<std::size_t>();
    a.precision = j.value("precision", "");
    a.allow_tf32 = j.value("allow_tf32", false);
  } catch (const nlohmann::json::exception& e) {
    return std::string("START: ") + e.what();
  }
  if (a.pages_bytes < runner::kDataOffset) return std::string("START: pages_bytes is smaller than the protocol's header");
  return a;
}

}  // namespace

void serve_kernelbench_runner(sandbox::SharedPages pages, pid_t parent, bool cuda) {
  // The interpreter without torch first: its paths are what the files' confinement lets it read,
  // and it must come before any thread (torch's import, the CUDA driver) starts.
  const auto started = task::start_python(false);
  nlohmann::json files = started ? runner::confine_files_at_start(cuda, task::interpreter_paths()) : nlohmann::json::object();
  KernelbenchServer server(parent, cuda);
  std::string not_ready = started ? std::string() : started.error().message;
  if (not_ready.empty()) {
    if (auto imported = task::start_python(true); !imported) not_ready = imported.error().message;
  }
  if (not_ready.empty()) not_ready = server.get_ready(std::move(files));
  auto* h = reinterpret_cast<Header*>(pages.data());
  const std::string start = runner::wait_for_start(h, parent);
  if (!not_ready.empty()) runner::fail_set_up(h, not_ready);
  auto args = read_start(start);
  if (auto* bad = std::get_if<std::string>(&args)) runner::fail_set_up(h, *bad);
  // On the CPU the call's tensors follow the header: the child extended the pages for them.
  if (auto grown = pages.grow(std::get<RunnerArgs>(args).pages_bytes); !grown) runner::fail_set_up(h, grown.error().message);
  h = reinterpret_cast<Header*>(pages.data());
  auto report = server.set_up(h, pages.data(), std::move(std::get<RunnerArgs>(args)));
  if (auto* failed = std::get_if<std::string>(&report)) runner::fail_set_up(h, *failed);
  runner::answer_set_up(h, std::get<nlohmann::json>(report).dump());
  server.serve();
}

}  // namespace kernelrl::eval
