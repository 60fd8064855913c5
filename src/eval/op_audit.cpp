#include "eval/op_audit.hpp"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <set>

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// Operators that allocate, alias, copy or fill: what a candidate needs around its own kernels.
const std::set<std::string>& allowed_ops() {
  static const std::set<std::string> ops{
      // allocation and constant fills
      "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones",
      "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "fill_", "zero_", "scalar_tensor",
      "lift_fresh", "lift_fresh_copy", "resize_",
      // views and reshapes
      "view", "_unsafe_view", "_reshape_alias", "reshape", "as_strided", "alias", "detach", "t", "transpose",
      "permute", "expand", "expand_as", "squeeze", "unsqueeze", "select", "slice", "split", "split_with_sizes",
      "unbind", "narrow", "chunk", "flatten", "unflatten", "view_as", "movedim", "swapaxes", "swapdims", "diagonal",
      "unfold", "set_",
      // copies, dtype and device moves, reading a scalar
      "clone", "copy_", "_to_copy", "to", "contiguous", "_copy_from", "_copy_from_and_resize", "_local_scalar_dense",
      "item", "is_nonzero"};
  return ops;
}

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

bool torch_op_allowed(const std::string& schema_name) {
  const std::string prefix = "aten::";
  if (schema_name.rfind(prefix, 0) != 0) return false;
  return allowed_ops().count(schema_name.substr(prefix.size())) > 0;
}

common::Expected<TorchOpAudit> TorchOpAudit::create() {
  try {
    py::dict scope;
    py::exec(kModeSource, scope);
    py::set allowed;
    for (const auto& op : allowed_ops()) allowed.add(py::str("aten::" + op));
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
