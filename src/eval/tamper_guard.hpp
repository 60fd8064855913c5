// A kernelbench candidate's Python runs in the interpreter the reference, the input draws and the
// checker use. The guard snapshots what such code could change to fool them, before the candidate's
// module is imported, and names the first change afterwards:
// - functions and classes of torch's namespaces (torch, torch.nn.functional, torch.Tensor and its
//   C base, torch._C._VariableFunctions, torch._C._nn, torch.nn.Module, torch.cuda, torch.random):
//   a replaced torch.softmax makes the reference agree with anything; a replaced manual_seed makes
//   the inputs predictable;
// - the task module's functions and classes and the Model class itself (its forward);
// - numerics and speed settings: TF32 and reduced-precision reductions (a reference in TF32 accepts
//   a downcast candidate), float32 matmul precision, the default dtype, deterministic algorithms,
//   torch's CPU thread count (a reference on one thread looks slow).
// - code that runs inside torch whoever calls it: global module hooks (torch.nn.modules.module's
//   _global_*_hooks) and torch function or dispatch modes left active.
// New names in a module are not changes (torch adds lazily imported submodules); in a class they are
// (a new __call__ on Model overrides nn.Module's). Python objects: interpreter thread only.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <vector>

namespace kernelrl::eval {

// Runs the one-time lazy set-up of torch that honest kernelbench candidates, and the evaluator's own
// operator audit, trigger anyway, so that a TamperGuard snapshot taken afterwards sees only what a
// candidate changes: torch >= 2 replaces torch.manual_seed with a dynamo-disabled wrapper the first
// time torch._dynamo is imported, which entering a TorchDispatchMode does. Imports torch._dynamo
// (where it exists) and enters and leaves a dispatch mode once around a CPU operation. Touches no
// CUDA, not even the driver's device count (which torch.utils.cpp_extension's import reads, and
// after which forked children cannot use CUDA: the child imports that one itself), so a worker can
// do it before forking its children. Cheap once done.
void settle_torch_lazy_state();

class TamperGuard {
 public:
  // `task_module` and `model_class`: the task's module and its Model (may be None).
  TamperGuard(const pybind11::object& task_module, const pybind11::object& model_class);

  // "torch.softmax was replaced", "torch.backends.cuda.matmul.allow_tf32 changed from False to
  // True", "a global module hook is registered (...)", ...; "" when nothing changed. Called outside
  // the operator audit's own dispatch mode.
  std::string first_change() const;

 private:
  struct Watched {
    std::string label;
    pybind11::object dict;                        // the namespace's __dict__ (kept alive)
    bool is_class = false;
    std::map<std::string, pybind11::object> values;  // name -> the watched value (kept alive, compared by identity)
  };
  std::vector<Watched> watched_;
  std::vector<std::pair<std::string, std::string>> settings_;  // expression, repr() of its value
  pybind11::object interceptors_;  // kInterceptors' function: global module hooks, active modes
};

}  // namespace kernelrl::eval
