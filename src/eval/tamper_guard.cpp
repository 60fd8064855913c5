#include "eval/tamper_guard.hpp"

#include <pybind11/eval.h>

#include <tuple>
#include <utility>

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// Settings that change what the reference computes or how fast it runs, as Python expressions.
constexpr const char* kSettings[] = {
    "torch.backends.cuda.matmul.allow_tf32",
    "torch.backends.cudnn.allow_tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    "torch.get_float32_matmul_precision()",
    "torch.get_default_dtype()",
    "torch.are_deterministic_algorithms_enabled()",
    "torch.get_num_threads()",
};

std::string setting_value(const char* expression, const py::dict& scope) {
  try {
    return py::repr(py::eval(expression, scope)).cast<std::string>();
  } catch (py::error_already_set&) {
    return "<unavailable>";  // an older torch; the same each time
  }
}

py::object dict_of(const py::object& obj) {
  if (obj.is_none() || !py::hasattr(obj, "__dict__")) return py::none();
  return obj.attr("__dict__");
}

}  // namespace

TamperGuard::TamperGuard(const py::object& task_module, const py::object& model_class) {
  py::module_ torch = py::module_::import("torch");
  py::object C = torch.attr("_C");
  py::object tensor_base = py::hasattr(C, "TensorBase") ? C.attr("TensorBase") : py::getattr(C, "_TensorBase", py::none());
  const std::vector<std::tuple<std::string, py::object, bool>> targets{
      {"torch", torch, false},
      {"torch.nn.functional", py::module_::import("torch.nn.functional"), false},
      {"torch.Tensor", torch.attr("Tensor"), true},
      {"torch._C.TensorBase", tensor_base, true},
      {"torch._C._VariableFunctions", py::getattr(C, "_VariableFunctions", py::none()), true},
      {"torch._C._nn", py::getattr(C, "_nn", py::none()), false},
      {"torch.nn.Module", torch.attr("nn").attr("Module"), true},
      {"torch.cuda", py::module_::import("torch.cuda"), false},
      {"torch.random", py::module_::import("torch.random"), false},
      {"the task module", task_module, false},
      {"the task's Model", model_class, true},
  };
  for (const auto& [label, obj, is_class] : targets) {
    py::object d = dict_of(obj);
    if (d.is_none()) continue;
    Watched w{label, d, is_class, {}};
    for (auto item : py::reinterpret_borrow<py::object>(d).attr("items")()) {
      py::handle value = item[py::int_(1)];
      // Modules: functions and classes only (their data, e.g. torch.cuda's initialisation state,
      // changes by itself). Classes: everything.
      if (!is_class && !PyCallable_Check(value.ptr())) continue;
      w.values[py::str(item[py::int_(0)]).cast<std::string>()] = py::reinterpret_borrow<py::object>(value);
    }
    watched_.push_back(std::move(w));
  }
  py::dict scope;
  scope["torch"] = torch;
  for (const char* expression : kSettings) settings_.emplace_back(expression, setting_value(expression, scope));
}

std::string TamperGuard::first_change() const {
  py::gil_scoped_acquire gil;
  for (const auto& w : watched_) {
    py::dict now(w.dict);
    const std::string prefix = w.label.rfind("the ", 0) == 0 ? w.label + "'s " : w.label + ".";
    for (const auto& [name, value] : w.values) {
      if (!now.contains(name.c_str())) return prefix + name + " was removed";
      if (!py::object(now[name.c_str()]).is(value)) return prefix + name + " was replaced";
    }
    if (!w.is_class) continue;
    for (auto item : now) {
      const std::string name = py::str(item.first).cast<std::string>();
      if (!w.values.count(name)) return prefix + name + " was added";
    }
  }
  py::dict scope;
  scope["torch"] = py::module_::import("torch");
  for (const auto& [expression, before] : settings_) {
    const std::string after = setting_value(expression.c_str(), scope);
    if (after != before) return expression + " changed from " + before + " to " + after;
  }
  return "";
}

}  // namespace kernelrl::eval
