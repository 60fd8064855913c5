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

constexpr const char* kSettle = R"(
import importlib.util
import torch
if importlib.util.find_spec("torch._dynamo") is not None:
    import torch._dynamo
try:
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:
    TorchDispatchMode = None
if TorchDispatchMode is not None:
    class _KernelrlSettle(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    with _KernelrlSettle():
        torch.ones(2).add(1)
)";

// Code that runs inside torch around every module call or operator, whoever calls it: global module
// hooks (a forward hook on every module makes the reference return what it likes, a pre-hook can
// run it several extra times) and torch function or dispatch modes left active (they rewrite the
// reference's operators). None may exist while the reference or the checker runs. "" when none.
constexpr const char* kInterceptors = R"PY(
def _kernelrl_interceptors(torch):
    module = torch.nn.modules.module
    for name in sorted(vars(module)):
        if name.startswith("_global_") and name.endswith("_hooks") and vars(module)[name]:
            return "a global module hook is registered (torch.nn.modules.module." + name + ")"
    C = torch._C
    if hasattr(C, "_len_torch_function_stack") and C._len_torch_function_stack() > 0:
        return "a torch function mode is active"
    if hasattr(C, "_len_torch_dispatch_stack") and C._len_torch_dispatch_stack() > 0:
        return "a torch dispatch mode is active"
    return ""
)PY";

}  // namespace

void settle_torch_lazy_state() {
  py::gil_scoped_acquire gil;
  try {
    py::exec(kSettle, py::dict());
  } catch (py::error_already_set&) {
    // An older or partial torch: the guard then compares against whatever state there is.
  }
}

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
  py::dict defs;
  py::exec(kInterceptors, defs);
  interceptors_ = defs["_kernelrl_interceptors"];
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
  py::module_ torch = py::module_::import("torch");
  if (std::string hooked = interceptors_(torch).cast<std::string>(); !hooked.empty()) return hooked;
  py::dict scope;
  scope["torch"] = torch;
  for (const auto& [expression, before] : settings_) {
    const std::string after = setting_value(expression.c_str(), scope);
    if (after != before) return expression + " changed from " + before + " to " + after;
  }
  return "";
}

}  // namespace kernelrl::eval
