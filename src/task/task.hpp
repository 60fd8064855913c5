// A task in KernelBench's problem format: a Python file defining `class Model(nn.Module)`,
// `get_inputs()` and `get_init_inputs()`, run unmodified in the embedded interpreter.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace kernelrl::task {

// Shape and dtype of one tensor of a task's signature.
struct TensorSpec {
  std::string name;            // "input 0", a state_dict key, or "output 0"
  std::vector<std::int64_t> shape;
  std::string dtype;           // "float32", "bfloat16", "int64", ...
};

// What a candidate receives and must produce, in ABI order.
struct Signature {
  std::vector<TensorSpec> inputs;   // tensor values of get_inputs(), in order
  std::vector<TensorSpec> params;   // Model(*get_init_inputs()).state_dict(), in order
  std::vector<TensorSpec> outputs;  // forward's return: one tensor or a tuple of tensors
  std::vector<std::string> init_inputs;  // repr() of get_init_inputs(), the task's constants
};

nlohmann::json to_json(const Signature& s);
Signature signature_from_json(const nlohmann::json& j);

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
