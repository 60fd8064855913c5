// Compares a candidate's outputs with the reference's: count, shape, dtype, then every element
// with the per-dtype tolerance of the rule set (overridable in EvalOptions). Outputs on the GPU are
// first screened there (device_screen.hpp); any mismatch, and every CPU output, goes through the C++
// checker on host memory, whose verdict and description are the ones reported.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.hpp"
#include "eval/options.hpp"
#include "eval/result.hpp"
#include "eval/torch_tensors.hpp"

namespace kernelrl::eval {

struct OutputCheck {
  bool ok = false;
  ErrorDetails details;       // filled when !ok
  nlohmann::json tolerance;   // {"float32": {"atol": .., "rtol": ..}, ...} as used
};

// `expected` are the reference's output tensors (on the device or the CPU), unchanged until this returns.
// `rules`: KERNELBENCH judges floats at KernelBench's tolerance (checker.hpp, kernelbench_tolerance)
// and the output as a whole at the strict rules' relative L2 bound at the least (KernelBench has
// no whole-output check; ours keeps outputs of zeros out without refusing what strict accepts).
OutputCheck check_outputs(const std::vector<pybind11::object>& actual, const std::vector<pybind11::object>& expected,
                          const EvalOptions& options, common::RuleSet rules = common::RuleSet::STRICT);

// Index of the first tensor in `now` whose bytes differ from `before`, or -1.
int first_changed(const std::vector<pybind11::object>& now, const std::vector<pybind11::object>& before);

}  // namespace kernelrl::eval
