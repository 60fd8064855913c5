// A task in KernelBench's problem format: a Python file defining `class Model(nn.Module)`,
// `get_inputs()` and `get_init_inputs()`, run unmodified in the embedded interpreter.
#pragma once

#include <pybind11/pybind11.h>

#include <filesystem>
#include <string>

#include "common/expected.hpp"
#include "task/signature.hpp"

namespace kernelrl::task {

// A loaded task module. Python objects: use only on the thread that owns the interpreter.
struct TaskModule {
  std::filesystem::path path;
  std::string source;
  std::string hash;  // content hash of the source
  pybind11::object module;
  pybind11::object model_class;
  pybind11::object get_inputs;
  pybind11::object get_init_inputs;
};

// Reads and executes a task file in a fresh module namespace. Errors name the file and the
// problem: missing file, syntax error with its line, missing Model/get_inputs/get_init_inputs, an
// exception raised at import. Needs start_python() first.
common::Expected<TaskModule> load_task(const std::filesystem::path& path);

// Executes a Python file (a kernelbench candidate) as a module named `module_name`.
common::Expected<pybind11::object> exec_python_file(const std::string& source, const std::string& display_path,
                                                    const std::string& module_name);

}  // namespace kernelrl::task
