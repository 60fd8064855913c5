#include "eval/candidate.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>

#include <pybind11/eval.h>

#include "common/fs.hpp"
#include "compile/compiler.hpp"
#include "task/python_runtime.hpp"
#include "task/task.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

// Replaces torch.utils.cpp_extension.load_inline and load, for the evaluating child, by loaders of
// what the prebuild (compile/build_kernelbench.cpp) already built under TORCH_EXTENSIONS_DIR:
// the child imports the candidate under its syscall filter, where starting ninja or a compiler is
// not allowed. An extension the prebuild did not build (load_inline inside __init__ or forward) is
// an error that says so.
constexpr const char* kPrebuiltLoaders = R"PY(
import os
import torch.utils.cpp_extension as _ce

def _kernelrl_prebuilt(name, *args, build_directory=None, is_python_module=True, is_standalone=False, **kwargs):
    if is_standalone:
        raise RuntimeError(f"load_inline/load('{name}'): standalone executables are not supported")
    directory = build_directory or os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], name)
    path = os.path.join(directory, name + _ce.LIB_EXT)
    if not os.path.exists(path):
        raise RuntimeError(
            f"load_inline/load('{name}'): no extension was built for it before the evaluation; call load_inline "
            "at module level (the candidate file is run once to build its extensions, and the evaluation may not "
            "start compilers)")
    return _ce._import_module_from_library(name, directory, is_python_module)

_ce.load_inline = _kernelrl_prebuilt
_ce.load = _kernelrl_prebuilt
)PY";

using forward_fn = int (*)(const DLTensor*, int, const DLTensor*, int, DLTensor*, int, void*);

class SharedObjectCandidate : public Candidate {
 public:
  SharedObjectCandidate(void* handle, forward_fn fn, std::vector<py::object> params)
      : handle_(handle), fn_(fn), params_(std::move(params)), param_views_(make_views(params_)) {}

  CallOutcome call(CallArgs& args, void* stream) override {
    CallOutcome out;
    ViewSet in = args.input_views.copy(), params = param_views_.copy(), outs = args.output_views.copy();
    int rc = 0;
    try {
      rc = fn_(in.views.data(), static_cast<int>(in.views.size()), params.views.data(),
               static_cast<int>(params.views.size()), outs.views.data(), static_cast<int>(outs.views.size()), stream);
    } catch (const std::exception& e) {
      out.failure = CallFailure{std::string("kernelrl_forward threw a C++ exception: ") + e.what()};
      return out;
    } catch (...) {
      out.failure = CallFailure{"kernelrl_forward threw a C++ exception"};
      return out;
    }
    if (rc != 0) out.failure = CallFailure{"kernelrl_forward returned " + std::to_string(rc) + " (non-zero means failure)"};
    return out;
  }

  bool uses_preallocated_outputs() const override { return true; }

 private:
  void* handle_;  // never dlclose()d: the child exits after one candidate
  forward_fn fn_;
  std::vector<py::object> params_;
  ViewSet param_views_;
};

// Why ModelNew's outputs are not what the checker may read: a torch.Tensor subclass (or a tensor
// wrapper) can compute its value when the checker reads it, outside the timed call and the
// operator audit. Plain tensors and parameters pass; nullopt when all do.
std::optional<std::string> not_a_plain_tensor(const std::vector<py::object>& outputs) {
  py::module_ torch = py::module_::import("torch");
  const py::object tensor = torch.attr("Tensor");
  const py::object parameter = torch.attr("nn").attr("Parameter");
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const py::handle type = py::type::handle_of(outputs[i]);
    if (!py::isinstance(outputs[i], tensor) || type.is(tensor) || type.is(parameter)) continue;
    return "ModelNew.forward returned a " + py::str(type.attr("__qualname__")).cast<std::string>() +
           " (a torch.Tensor subclass) as output " + std::to_string(i) +
           ": outputs must be plain torch.Tensor objects (a subclass can compute its value when the checker reads "
           "it, outside the timed call)";
  }
  return std::nullopt;
}

class KernelBenchCandidate : public Candidate {
 public:
  KernelBenchCandidate(py::object module, py::object model) : module_(std::move(module)), model_(std::move(model)) {}

  CallOutcome call(CallArgs& args, void*) override {
    CallOutcome out;
    try {
      py::object no_grad = py::module_::import("torch").attr("no_grad")();
      no_grad.attr("__enter__")();
      py::tuple argv(args.inputs.size());
      for (std::size_t i = 0; i < args.inputs.size(); ++i) argv[i] = args.inputs[i];
      py::object ret;
      try {
        ret = model_(*argv);
      } catch (...) {
        no_grad.attr("__exit__")(py::none(), py::none(), py::none());
        throw;
      }
      no_grad.attr("__exit__")(py::none(), py::none(), py::none());
      out.outputs = output_list(ret);
      if (auto refused = not_a_plain_tensor(out.outputs)) out.failure = CallFailure{*refused, true};
    } catch (py::error_already_set& e) {
      out.failure = CallFailure{"ModelNew.forward raised: " + task::format_python_error(e.what(), "")};
    }
    return out;
  }

  bool uses_preallocated_outputs() const override { return false; }

 private:
  py::object module_;
  py::object model_;
};

}  // namespace

LoadOutcome load_shared_object(const std::string& artifact, const std::vector<py::object>& params) {
  LoadOutcome out;
  void* handle = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    out.status = common::Status::RUNTIME_ERROR;
    const char* e = ::dlerror();
    out.error = std::string("cannot load the compiled candidate: ") + (e ? e : "dlopen failed");
    return out;
  }
  auto fn = reinterpret_cast<forward_fn>(::dlsym(handle, "kernelrl_forward"));
  if (!fn) {
    out.status = common::Status::FORMAT_ERROR;
    out.error = "the compiled candidate exports no `kernelrl_forward` (declare it extern \"C\" and not static)";
    return out;
  }
  out.candidate = std::make_unique<SharedObjectCandidate>(handle, fn, params);
  return out;
}

common::Fallible prepare_kernelbench_loading() {
  try {
    py::exec(kPrebuiltLoaders, py::dict());
  } catch (py::error_already_set& e) {
    return common::Error{std::string("cannot prepare the kernelbench loaders: ") + e.what()};
  }
  return common::Ok{};
}

LoadOutcome load_kernelbench(const std::string& entry_dir, const std::string& display_name,
                             const py::object& init_inputs, const py::object& device, const py::object& precision,
                             std::uint64_t init_seed) {
  LoadOutcome out;
  auto source = common::read_file(entry_dir + "/candidate.py", 1u << 20);
  if (!source) {
    out.status = common::Status::RUNTIME_ERROR;
    out.error = source.error().message;
    return out;
  }
  py::object environ = py::module_::import("os").attr("environ");
  environ["TORCH_EXTENSIONS_DIR"] = entry_dir + "/extensions";
  // The same architecture list as the prebuild, or torch sees other flags and rebuilds (~40 s).
  py::object cuda = py::module_::import("torch").attr("cuda");
  if (cuda.attr("is_available")().cast<bool>()) {
    py::tuple cap = cuda.attr("get_device_capability")();
    environ["TORCH_CUDA_ARCH_LIST"] =
        compile::torch_cuda_arch_list(std::to_string(cap[0].cast<int>()) + std::to_string(cap[1].cast<int>()));
  }
  auto mod = task::exec_python_file(*source, display_name, "kernelrl_candidate");
  if (!mod) {
    out.status = common::Status::RUNTIME_ERROR;
    out.error = mod.error().message;
    return out;
  }
  if (!py::hasattr(*mod, "ModelNew")) {
    out.status = common::Status::FORMAT_ERROR;
    out.error = display_name + ": no `class ModelNew` defined";
    return out;
  }
  try {
    py::module_ torch = py::module_::import("torch");
    torch.attr("manual_seed")(init_seed);
    py::object model = (*mod).attr("ModelNew")(*init_inputs).attr("to")(device).attr("eval")();
    if (!precision.is_none()) model = model.attr("to")(precision);
    out.candidate = std::make_unique<KernelBenchCandidate>(*mod, model);
  } catch (py::error_already_set& e) {
    out.status = common::Status::RUNTIME_ERROR;
    out.error = "ModelNew(*get_init_inputs()) raised: " + task::format_python_error(e.what(), display_name);
  }
  return out;
}

}  // namespace kernelrl::eval
