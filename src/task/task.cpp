#include "task/task.hpp"

#include "common/fs.hpp"
#include "common/hash.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::task {

common::Expected<py::object> exec_python_file(const std::string& source, const std::string& display_path,
                                              const std::string& module_name) {
  try {
    py::module_ types = py::module_::import("types");
    py::object mod = types.attr("ModuleType")(module_name);
    mod.attr("__file__") = display_path;
    py::object builtins = py::module_::import("builtins");
    py::object code = builtins.attr("compile")(py::bytes(source), display_path, "exec");
    builtins.attr("exec")(code, mod.attr("__dict__"));
    return mod;
  } catch (py::error_already_set& e) {
    std::string kind = e.matches(PyExc_SyntaxError) ? "syntax error" : "raised at import";
    return common::make_error(display_path + ": " + kind + ": " + format_python_error(e.what(), display_path));
  }
}

common::Expected<TaskModule> load_task(const std::filesystem::path& path) {
  auto source = common::read_file(path, 16u << 20);
  if (!source) return source.error();
  TaskModule t;
  t.path = path;
  t.source = *source;
  t.hash = common::hash_hex(t.source);
  auto mod = exec_python_file(t.source, path.string(), "kernelrl_task_" + t.hash.substr(0, 12));
  if (!mod) return mod.error();
  t.module = *mod;
  for (const char* name : {"Model", "get_inputs", "get_init_inputs"}) {
    if (!py::hasattr(t.module, name)) {
      return common::make_error(path.string() + ": no `" + name +
                                "` defined (a task needs class Model, get_inputs() and get_init_inputs())");
    }
  }
  t.model_class = t.module.attr("Model");
  t.get_inputs = t.module.attr("get_inputs");
  t.get_init_inputs = t.module.attr("get_init_inputs");
  if (!PyCallable_Check(t.get_inputs.ptr())) return common::make_error(path.string() + ": get_inputs is not a function");
  if (!PyCallable_Check(t.get_init_inputs.ptr())) {
    return common::make_error(path.string() + ": get_init_inputs is not a function");
  }
  return t;
}

}  // namespace kernelrl::task
