#include "task/python_runtime.hpp"

#include <pybind11/embed.h>

#include <sstream>

#include "kernelrl/build_config.hpp"

namespace py = pybind11;

namespace kernelrl::task {

namespace {

bool g_started = false;

common::Fallible import_torch_module() {
  try {
    py::module_::import("torch");
  } catch (const py::error_already_set& e) {
    return common::make_error(std::string("the embedded Python (") + build::python_executable +
                              ") cannot import torch: " + e.what());
  }
  return common::Ok{};
}

}  // namespace

common::Fallible start_python(bool import_torch) {
  if (g_started) return import_torch ? import_torch_module() : common::Ok{};
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // SIGINT and friends keep their default meaning
  config.parse_argv = 0;
  // Naming the interpreter's executable lets CPython find its prefix and, for a venv, its
  // pyvenv.cfg, so the embedded interpreter sees the same site-packages (torch) as that python.
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, build::python_executable);
  if (PyStatus_Exception(st)) {
    PyConfig_Clear(&config);
    return common::make_error(std::string("cannot configure the embedded Python for ") + build::python_executable);
  }
  try {
    py::initialize_interpreter(&config, 0, nullptr, false);
  } catch (const std::exception& e) {
    return common::make_error(std::string("cannot start the embedded Python (") + build::python_executable +
                              "): " + e.what());
  }
  g_started = true;
  return import_torch ? import_torch_module() : common::Ok{};
}

void python_after_fork_child() { PyOS_AfterFork_Child(); }

std::string format_python_error(const std::string& what, const std::string& file_name) {
  (void)file_name;
  // pybind11's text is "ExcType: message\n\nAt:\n  file(line): func\n...". Keep the message and the
  // frames (innermost last) so a model sees where its code failed.
  std::istringstream in(what);
  std::string line, head, frames;
  bool in_frames = false;
  int n_frames = 0;
  while (std::getline(in, line)) {
    if (line == "At:") {
      in_frames = true;
      continue;
    }
    if (!in_frames) {
      if (!line.empty()) head += (head.empty() ? "" : " ") + line;
    } else if (!line.empty() && n_frames < 8) {
      frames += "\n  " + line.substr(line.find_first_not_of(' '));
      ++n_frames;
    }
  }
  return head + frames;
}

std::vector<std::string> interpreter_paths() {
  py::module_ sys = py::module_::import("sys");
  std::vector<std::string> paths;
  for (const char* attr : {"prefix", "exec_prefix", "base_prefix"}) paths.push_back(sys.attr(attr).cast<std::string>());
  for (const auto& p : sys.attr("path")) {
    if (py::isinstance<py::str>(p)) paths.push_back(p.cast<std::string>());
  }
  py::object spec = py::module_::import("importlib.util").attr("find_spec")("torch");
  if (!spec.is_none()) {
    if (!spec.attr("origin").is_none()) paths.push_back(spec.attr("origin").cast<std::string>());
    for (const auto& p : spec.attr("submodule_search_locations")) paths.push_back(p.cast<std::string>());
  }
  return paths;
}

}  // namespace kernelrl::task
