// The setup phase of an evaluating child (child_phases.hpp): only the task's code runs here, so
// every failure is the task's or the machine's (TaskError).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "eval/child_phases.hpp"
#include "eval/dtype.hpp"
#include "eval/gpu.hpp"
#include "eval/torch_tensors.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

std::vector<task::TensorSpec> specs_of(const std::vector<py::object>& tensors, const std::string& prefix) {
  std::vector<task::TensorSpec> specs;
  int i = 0;
  for (const auto& t : tensors) {
    if (!is_tensor(t)) continue;
    specs.push_back({prefix + " " + std::to_string(i++), shape_of(t), dtype_name(t)});
  }
  return specs;
}

// The device and its stream; on a GPU its facts go to device_info.
void set_up_device(ChildSetup& s, Observations& obs) {
  s.cuda = s.req.device == "cuda";
  s.device = s.torch.attr("device")(s.req.device);
  if (!s.cuda) return;
  if (!s.torch.attr("cuda").attr("is_available")().cast<bool>()) {
    throw TaskError{"CUDA was requested but torch sees no usable GPU in this process"};
  }
  s.torch.attr("cuda").attr("set_device")(0);
  auto stream = gpu::create_blocking_stream();
  if (!stream) throw TaskError{stream.error().message};
  s.stream = *stream;
  py::object ext = s.torch.attr("cuda").attr("ExternalStream")(reinterpret_cast<std::uintptr_t>(s.stream));
  s.torch.attr("cuda").attr("set_stream")(ext);
  auto facts = gpu::device_facts(0);
  if (!facts) throw TaskError{facts.error().message};
  s.l2_bytes = facts->l2_bytes;
  obs.device_info = {{"name", facts->name},
                     {"compute_capability", std::to_string(facts->compute_capability_major) + "." +
                                                std::to_string(facts->compute_capability_minor)},
                     {"n_sms", facts->n_sms},
                     {"l2_bytes", facts->l2_bytes},
                     {"memory_bytes", facts->memory_bytes},
                     {"driver_version", facts->driver_version},
                     {"runtime_version", facts->runtime_version}};
}

// Bytes of one call's tensors, each rounded up to 64 (the host runner's shared pages).
std::size_t call_tensor_bytes(const task::Signature& sig) {
  std::size_t total = 0;
  for (const auto* specs : {&sig.inputs, &sig.params, &sig.outputs}) {
    for (const auto& spec : *specs) {
      std::size_t n = 1;
      for (auto d : spec.shape) n *= static_cast<std::size_t>(std::max<std::int64_t>(d, 0));
      auto dtype = parse_dtype(spec.dtype);
      total += (n * (dtype ? element_size_bytes(*dtype) : 8) + 63) / 64 * 64;
    }
  }
  return total;
}

}  // namespace

ChildSetup set_up(const task::TaskModule& task, const ChildRequest& req, py::module_ torch, Observations& obs) {
  ChildSetup s(task, req, std::move(torch));
  set_up_device(s, obs);
  py::object backends = s.torch.attr("backends");
  backends.attr("cuda").attr("matmul").attr("allow_tf32") = req.options.allow_tf32;
  backends.attr("cudnn").attr("allow_tf32") = req.options.allow_tf32;
  obs.versions["torch"] = py::str(s.torch.attr("__version__")).cast<std::string>();
  obs.versions["python"] = py::str(py::module_::import("platform").attr("python_version")()).cast<std::string>();
  if (s.cuda) obs.versions["torch_cuda"] = py::str(s.torch.attr("version").attr("cuda")).cast<std::string>();

  s.init_seed = fresh_seed();
  obs.seeds.push_back(s.init_seed);
  const std::string file = task.path.string();
  try {
    s.precision = precision_dtype(req.options.precision);
  } catch (const std::invalid_argument& e) {
    throw TaskError{e.what()};
  }
  try {
    s.torch.attr("manual_seed")(s.init_seed);
    s.init_inputs = task.get_init_inputs();
    if (!s.precision.is_none()) {
      s.init_inputs = py::cast(cast_floating(s.init_inputs.cast<std::vector<py::object>>(), s.precision));
    }
    s.model = task.model_class(*s.init_inputs).attr("to")(s.device).attr("eval")();
    if (!s.precision.is_none()) s.model = s.model.attr("to")(s.precision);
  } catch (py::error_already_set& e) {
    throw TaskError{file + ": Model(*get_init_inputs()) raised: " + task::format_python_error(e.what(), file)};
  }
  py::object state = s.model.attr("state_dict")();
  std::vector<task::TensorSpec> param_specs;
  for (auto item : state.attr("items")()) {
    py::object t = py::reinterpret_borrow<py::object>(item[py::int_(1)]);
    s.params.push_back(t);
    param_specs.push_back({py::str(item[py::int_(0)]).cast<std::string>(), shape_of(t), dtype_name(t)});
  }
  s.params_snapshot = clone_all(s.params);

  std::vector<py::object> inputs;
  py::object ret;
  try {
    auto t_step = child_clock::now();
    inputs = s.fresh_inputs(fresh_seed());
    add_step(obs.phases_ms, "setup.draw", t_step);
    ret = s.call_reference(inputs);
    if (s.cuda) s.torch.attr("cuda").attr("synchronize")();
    add_step(obs.phases_ms, "setup.reference", t_step);
  } catch (py::error_already_set& e) {
    throw TaskError{file + ": the reference forward raised: " + task::format_python_error(e.what(), file)};
  }
  std::vector<py::object> outs = output_list(ret);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!is_tensor(outs[i])) throw TaskError{file + ": forward returns a non-tensor value (output " + std::to_string(i) + ")"};
  }
  s.output_specs = specs_of(outs, "output");
  for (auto& o : outs) poison(o);  // the reference's outputs never linger readable
  s.work = {obs.phases_ms["setup.draw"], obs.phases_ms["setup.reference"]};

  s.signature.inputs = specs_of(inputs, "input");
  s.signature.params = param_specs;
  s.signature.outputs = s.output_specs;
  for (auto v : s.init_inputs) s.signature.init_inputs.push_back(py::repr(v).cast<std::string>());
  s.call_tensor_bytes = call_tensor_bytes(s.signature);
  return s;
}

}  // namespace kernelrl::eval
