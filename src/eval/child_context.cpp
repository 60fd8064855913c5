#include "eval/child_context.hpp"

#include <sys/random.h>

#include "eval/torch_tensors.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

double ms_since(child_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(child_clock::now() - t0).count();
}

void add_step(std::map<std::string, double>& phases_ms, const std::string& key, child_clock::time_point& t0) {
  const auto now = child_clock::now();
  phases_ms[key] += std::chrono::duration<double, std::milli>(now - t0).count();
  t0 = now;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::uint64_t fresh_seed() {
  std::uint64_t s = 0;
  while (::getrandom(&s, sizeof s, 0) != static_cast<ssize_t>(sizeof s)) {
  }
  return s & ((1ull << 63) - 1);  // torch.manual_seed takes a non-negative int64
}

Verdict make_verdict(common::Status status, std::string message, int trial) {
  Verdict v;
  v.status = status;
  v.error.message = std::move(message);
  v.error.trial = trial;
  return v;
}

py::object ChildSetup::call_reference(const std::vector<py::object>& inputs) const {
  py::object no_grad = torch.attr("no_grad")();
  no_grad.attr("__enter__")();
  py::tuple argv(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) argv[i] = inputs[i];
  py::object ret;
  try {
    ret = model(*argv);
  } catch (...) {
    no_grad.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  no_grad.attr("__exit__")(py::none(), py::none(), py::none());
  return ret;
}

std::vector<py::object> ChildSetup::fresh_inputs(std::uint64_t seed) const {
  torch.attr("manual_seed")(seed);
  if (!cuda || !py::hasattr(torch, "set_default_device")) {
    return cast_floating(to_device(task.get_inputs(), device), precision);
  }
  py::object scope = device;  // torch.device is a context manager since torch 2.0
  scope.attr("__enter__")();
  py::object values;
  try {
    values = task.get_inputs();
  } catch (...) {
    scope.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  scope.attr("__exit__")(py::none(), py::none(), py::none());
  return cast_floating(to_device(values, device), precision);
}

py::object ChildSetup::empty_like(const task::TensorSpec& spec) const {
  py::list shape;
  for (auto d : spec.shape) shape.append(d);
  py::object dtype = torch.attr(spec.dtype.c_str());
  py::dict kw;
  kw["dtype"] = dtype;
  kw["device"] = device;
  return torch.attr("empty")(shape, **kw);
}

void check_between_calls(Candidate& cand) {
  if (auto refused = cand.refusal_between_calls()) throw CandidateRefused{*refused};
}

void stage(Candidate& cand, InputSet& set) {
  check_between_calls(cand);
  if (auto staged = cand.stage(set.args); !staged) throw TaskError{staged.error().message};
}

void collect(Candidate& cand, InputSet& set) {
  if (auto collected = cand.collect(set.args); !collected) throw TaskError{collected.error().message};
}

}  // namespace kernelrl::eval
