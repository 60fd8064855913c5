#include "eval/op_audit.hpp"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include "audit/allowed_ops.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

constexpr const char* kModeSource = R"(
from torch.utils._python_dispatch import TorchDispatchMode


class KernelrlOpAudit(TorchDispatchMode):
    def __init__(self, allowed):
        super().__init__()
        self.allowed = allowed
        self.refused = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        if name not in self.allowed and name not in self.refused and len(self.refused) < 8:
            self.refused.append(name)
        return func(*args, **(kwargs or {}))
)";

}  // namespace

bool torch_op_allowed(const std::string& schema_name) { return audit::torch_op_allowed(schema_name); }

common::Expected<TorchOpAudit> TorchOpAudit::create() {
  try {
    py::dict scope;
    py::exec(kModeSource, scope);
    py::set allowed;
    for (const auto& op : audit::allowed_ops()) allowed.add(py::str("aten::" + op));
    return TorchOpAudit(scope["KernelrlOpAudit"], std::move(allowed));
  } catch (py::error_already_set& e) {
    return common::make_error(std::string("cannot set up the PyTorch operator audit: ") + e.what());
  }
}

std::vector<std::string> TorchOpAudit::refused_ops_during(const std::function<void()>& call) const {
  py::object mode = mode_class_(allowed_);
  mode.attr("__enter__")();
  try {
    call();
  } catch (...) {
    mode.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  mode.attr("__exit__")(py::none(), py::none(), py::none());
  return mode.attr("refused").cast<std::vector<std::string>>();
}

}  // namespace kernelrl::eval
