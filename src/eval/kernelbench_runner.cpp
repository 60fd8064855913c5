#include "eval/kernelbench_runner.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/torch_tensors.hpp"
#include "sandbox/confinement.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using runner::Op;

class KernelbenchRunnerCandidate : public RunnerCandidate {
 public:
  KernelbenchRunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, CallRules rules,
                             std::vector<py::object> output_likes)
      : RunnerCandidate(std::move(pages), pid, std::move(memory), rules), outputs_(std::move(output_likes)) {}

  // ModelNew returns its outputs; the runner copies them into the output slots at collect().
  bool uses_preallocated_outputs() const override { return false; }

  // The inputs into their slots, the output slots laid out after them, then the argument list (which
  // argument is which input slot; the others as Python literals) for the runner to rebuild.
  common::Fallible stage(CallArgs& args) override {
    if (auto staged = stage_tensors(args.inputs, outputs_); !staged) return staged;
    nlohmann::json list = nlohmann::json::array();
    int slot = 0;
    for (const auto& v : args.inputs) {
      if (is_tensor(v)) {
        list.push_back({{"slot", slot++}});
      } else {
        list.push_back({{"literal", py::repr(v).cast<std::string>()}});
      }
    }
    const std::string text = list.dump();
    if (text.size() >= runner::kTextBytes) {
      return common::make_error("the call's arguments that are not tensors take more than the " +
                                std::to_string(runner::kTextBytes) + " bytes the candidate process takes");
    }
    runner::write_text(header(), text);
    request(Op::ARGS);
    if (header()->rc != 0) return common::make_error(runner::read_text(header()));
    return common::Ok{};
  }

  CallOutcome call(CallArgs&, void*) override {
    CallOutcome out;
    pending_collect_ = false;
    call_requested();
    switch (header()->rc) {
      case runner::kCallDone:
        out.outputs = outputs_;
        pending_collect_ = true;
        break;
      case runner::kCallRefused:
        out.failure = CallFailure{runner::read_text(header()), true};
        break;
      case runner::kCallWrongOutputs:
        out.outputs = returned_shapes();
        break;
      default:
        out.failure = CallFailure{runner::read_text(header())};
        if (out.failure->message.empty()) out.failure->message = "ModelNew's call failed in the candidate's process";
    }
    return out;
  }

  // The outputs of the last call into their slots, before the call is judged (outside the clock).
  common::Fallible collect(CallArgs&) override {
    if (!pending_collect_) return common::Ok{};
    pending_collect_ = false;
    request(Op::COLLECT);
    if (header()->rc != 0) return common::make_error(runner::read_text(header()));
    return common::Ok{};
  }

 private:
  // What the call returned when it did not fit the output slots: tensors without storage ("meta")
  // of the returned shapes and dtypes (None for what was not a tensor), for the checker to name the
  // difference as it would in process. The runner's numbers are bounded; nothing is allocated.
  std::vector<py::object> returned_shapes() const {
    std::vector<py::object> out;
    const int n = std::min(std::max(header()->n_returned, 0), runner::kMaxReturned);
    py::module_ torch = py::module_::import("torch");
    for (int i = 0; i < n; ++i) {
      const runner::TensorSlot& r = header()->returned[i];
      auto dtype = from_dlpack(DlpackType{r.dtype.code, r.dtype.bits});
      if (r.ndim < 0 || r.ndim > runner::kMaxDims || !dtype) {
        out.push_back(py::none());
        continue;
      }
      py::tuple shape(static_cast<std::size_t>(r.ndim));
      for (int d = 0; d < r.ndim; ++d) shape[static_cast<std::size_t>(d)] = r.shape[d];
      py::dict kw;
      kw["dtype"] = torch.attr(std::string(to_string(*dtype)).c_str());
      kw["device"] = "meta";
      out.push_back(torch.attr("empty")(shape, **kw));
    }
    return out;
  }

  std::vector<py::object> outputs_;  // the child's tensors over the output slots
  bool pending_collect_ = false;
};

}  // namespace

std::unique_ptr<RunnerCandidate> kernelbench_runner_candidate(const ChildSetup& s, StartedRunner runner,
                                                              std::size_t tensor_bytes, CallRules rules) {
  // On the CPU the call's tensors follow the header, in the same memory file, which is sized here
  // past the file-size limit the child confines itself with (a call's tensors often pass 64 MB).
  if (!s.cuda) {
    const std::size_t n_bytes = runner::kDataOffset + tensor_bytes;
    if (auto grown = sandbox::with_file_size_limit_lifted(n_bytes, [&] { return runner.pages.grow(n_bytes); }); !grown) {
      throw TaskError{"cannot start the candidate's process: " + grown.error().message};
    }
  }
  auto* h = reinterpret_cast<runner::Header*>(runner.pages.data());
  RunnerMemory memory;
  if (s.cuda) {
    memory = device_arena(h, tensor_bytes);
  } else {
    memory.data = runner.pages.data() + runner::kDataOffset;
    memory.bytes = tensor_bytes;
  }
  std::vector<py::object> output_likes;
  for (const auto& spec : s.output_specs) output_likes.push_back(s.empty_like(spec));
  return std::make_unique<KernelbenchRunnerCandidate>(std::move(runner.pages), runner.pid, std::move(memory), rules,
                                                      std::move(output_likes));
}

std::string kernelbench_start_text(const ChildSetup& s, const std::string& entry_dir, std::size_t pages_bytes) {
  // The task's constructor arguments as Python literals (the runner never imports the task): they
  // must read back equal.
  std::string init_inputs;
  try {
    init_inputs = py::repr(s.init_inputs).cast<std::string>();
    const py::object back = py::module_::import("ast").attr("literal_eval")(init_inputs);
    if (!back.equal(s.init_inputs)) throw py::value_error("it reads back different");
  } catch (py::error_already_set& e) {
    throw TaskError{"the task's get_init_inputs() returned values that are not Python literals (" +
                    init_inputs.substr(0, 200) + "): a kernelbench candidate's process receives them as literals (" +
                    e.what() + ")"};
  }
  return nlohmann::json{{"entry_dir", entry_dir},
                        {"display_name", s.req.candidate},
                        {"init_inputs", init_inputs},
                        {"init_seed", s.init_seed},
                        {"precision", s.req.options.precision},
                        {"allow_tf32", s.req.options.allow_tf32},
                        {"pages_bytes", pages_bytes}}
      .dump();
}

}  // namespace kernelrl::eval
