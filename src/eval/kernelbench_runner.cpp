#include "eval/kernelbench_runner.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/runner_ahead.hpp"
#include "eval/torch_tensors.hpp"
#include "sandbox/confinement.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

using namespace std::chrono_literals;
using runner::Op;

class KernelbenchRunnerCandidate : public RunnerCandidate {
 public:
  KernelbenchRunnerCandidate(sandbox::SharedPages pages, pid_t pid, RunnerMemory memory, bool flush_caches,
                             std::vector<py::object> output_likes)
      : RunnerCandidate(std::move(pages), pid, std::move(memory), flush_caches, 1 << 20),
        outputs_(std::move(output_likes)) {}

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
    request(Op::ARGS, 0us);
    if (header()->rc != 0) return common::make_error(runner::read_text(header()));
    return common::Ok{};
  }

  CallOutcome call(CallArgs&, void*) override {
    CallOutcome out;
    header()->audit_ops = audit_next_ ? 1 : 0;
    const bool audited = audit_next_;
    audit_next_ = false;
    pending_collect_ = false;
    request(Op::CALL, 5ms);
    request(Op::PING, 5ms);
    refused_.clear();
    if (audited) {
      std::istringstream lines(std::string(header()->audit_text, strnlen(header()->audit_text, runner::kAuditTextBytes - 1)));
      for (std::string op; std::getline(lines, op) && refused_.size() < 8;) {
        if (!op.empty()) refused_.push_back(op);
      }
    }
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
    request(Op::COLLECT, 0us);
    if (header()->rc != 0) return common::make_error(runner::read_text(header()));
    return common::Ok{};
  }

  void audit_next_call() { audit_next_ = true; }
  const std::vector<std::string>& refused_ops_of_last_call() const { return refused_; }

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
  bool audit_next_ = false;
  bool pending_collect_ = false;
  std::vector<std::string> refused_;
};

// The operator audit of a call made in the runner: the runner runs it under its own dispatch mode.
class RunnerOpAudit : public OpAudit {
 public:
  explicit RunnerOpAudit(KernelbenchRunnerCandidate* candidate) : candidate_(candidate) {}
  std::vector<std::string> refused_ops_during(const std::function<void()>& call) const override {
    candidate_->audit_next_call();
    call();
    return candidate_->refused_ops_of_last_call();
  }

 private:
  KernelbenchRunnerCandidate* candidate_;  // owned by the same LoadedCandidate
};

}  // namespace

KernelbenchRunnerStart start_kernelbench_runner(const ChildSetup& s, const RunnerOptions& options, bool audit_ops) {
  ForkedRunner forked = take_runner_ahead(RunnerKind::KERNELBENCH);
  sandbox::SharedPages pages = std::move(forked.pages);
  const pid_t pid = forked.pid;
  // On the CPU the call's tensors follow the header, in the same memory file, which is sized here
  // past the file-size limit the child confines itself with (a call's tensors often pass 64 MB).
  if (!s.cuda) {
    const std::size_t n_bytes = runner::kDataOffset + options.tensor_bytes;
    if (auto grown = sandbox::with_file_size_limit_lifted(n_bytes, [&] { return pages.grow(n_bytes); }); !grown) {
      throw TaskError{"cannot start the candidate's process: " + grown.error().message};
    }
  }
  auto* h = reinterpret_cast<runner::Header*>(pages.data());
  RunnerMemory memory;
  if (s.cuda) {
    memory = device_arena(h, options.tensor_bytes);
  } else {
    memory.data = pages.data() + runner::kDataOffset;
    memory.bytes = options.tensor_bytes;
  }
  const std::string start = nlohmann::json{{"entry_dir", s.req.artifact},
                                           {"display_name", s.req.candidate},
                                           {"task_path", s.task.path.string()},
                                           {"init_seed", s.init_seed},
                                           {"pages_bytes", pages.size()}}
                                .dump();
  std::vector<py::object> output_likes;
  for (const auto& spec : s.output_specs) output_likes.push_back(s.empty_like(spec));
  auto candidate = std::make_unique<KernelbenchRunnerCandidate>(std::move(pages), pid, std::move(memory),
                                                                options.flush_caches, std::move(output_likes));
  KernelbenchRunnerStart out;
  candidate->start(start);
  out.runner.isolation = candidate->read_set_up_report();
  if (auto failed = candidate->load()) {
    out.runner.loaded = std::move(*failed);
    return out;
  }
  if (audit_ops && out.runner.isolation.value("torch_op_audit", false)) {
    out.op_audit = std::make_unique<RunnerOpAudit>(candidate.get());
  }
  out.runner.loaded.candidate = std::move(candidate);
  return out;
}

}  // namespace kernelrl::eval
