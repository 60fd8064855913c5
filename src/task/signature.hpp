// A task's signature: the shapes and dtypes of what a candidate receives and must produce, as
// the evaluating child finds them and as they cross process boundaries (JSON). No Python here: the
// engine, the service and the trainer read signatures without the embedded interpreter's headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

}  // namespace kernelrl::task
