// The task-info phase of a child asked about the task alone (`kernelrl tasks show/check`;
// child_phases.hpp): no candidate runs, every failure is the task's.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/child_phases.hpp"
#include "eval/timing.hpp"
#include "eval/torch_tensors.hpp"
#include "task/python_runtime.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// What makes a task useless for training, judged on two runs with different seeds: non-finite,
// nearly zero or nearly constant outputs, outputs that ignore the seed. Also the input size.
nlohmann::json task_health(const ChildSetup& s, const std::vector<py::object>& inputs_a) {
  std::int64_t input_bytes = 0;
  for (const auto& t : inputs_a) {
    if (is_tensor(t)) input_bytes += t.attr("numel")().cast<std::int64_t>() * t.attr("element_size")().cast<std::int64_t>();
  }
  std::vector<py::object> out_a, out_b;
  try {
    out_a = output_list(s.call_reference(inputs_a));
    out_b = output_list(s.call_reference(s.fresh_inputs(fresh_seed())));
  } catch (py::error_already_set& e) {
    throw TaskError{s.task.path.string() + ": the reference forward raised: " + task::format_python_error(e.what(), "")};
  }
  nlohmann::json problems = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (std::size_t i = 0; i < out_a.size(); ++i) {
    const std::string name = "output " + std::to_string(i);
    py::object a = out_a[i].attr("detach")();
    const std::int64_t numel = a.attr("numel")().cast<std::int64_t>();
    nlohmann::json o = {{"numel", numel}};
    if (a.attr("is_floating_point")().cast<bool>() && numel > 0) {
      py::object d = a.attr("double")();
      const std::int64_t n_bad = numel - s.torch.attr("isfinite")(d).attr("sum")().attr("item")().cast<std::int64_t>();
      py::object finite = d.attr("nan_to_num")(0.0, 0.0, 0.0);
      const double max_abs = finite.attr("abs")().attr("max")().attr("item")().cast<double>();
      const double mean = finite.attr("mean")().attr("item")().cast<double>();
      const double std = numel > 1 ? finite.attr("std")().attr("item")().cast<double>() : 0.0;
      o.update({{"n_nonfinite", n_bad}, {"max_abs", max_abs}, {"mean", mean}, {"std", std}});
      if (n_bad > 0) problems.push_back(name + " has " + std::to_string(n_bad) + " NaN/inf values");
      if (max_abs < 1e-6) {
        problems.push_back(name + " is nearly zero (max |x| " + short_number(max_abs) + ")");
      } else if (numel > 1 && std <= 1e-6 * std::max(1.0, std::abs(mean))) {
        problems.push_back(name + " is nearly constant (std " + short_number(std) + ", mean " + short_number(mean) + ")");
      }
    }
    if (numel > 1 && bytes_equal(out_a[i], out_b[i])) problems.push_back(name + " does not change with the seed");
    outputs.push_back(o);
  }
  return {{"input_bytes", input_bytes}, {"outputs", outputs}, {"problems", problems}};
}

// The eager reference on `inputs`, timed with the candidate's protocol. Throws TaskError when it fails.
TimingSummary time_reference(const ChildSetup& s, const std::vector<py::object>& inputs) {
  auto timer = CallTimer::create(s.cuda, s.stream, s.l2_bytes);
  if (!timer) throw TaskError{"cannot set up the timer: " + timer.error().message};
  auto times = (*timer)->run(
      [&](int) -> common::Fallible {
        try {
          s.call_reference(inputs);
        } catch (py::error_already_set& e) {
          return common::make_error(std::string("the reference raised: ") + e.what());
        }
        return common::Ok{};
      },
      s.req.options);
  if (!times) throw TaskError{"timing the reference failed: " + times.error().message};
  return summarize_ms(*times);
}

}  // namespace

nlohmann::json task_info(const ChildSetup& s, std::optional<TimingSummary>& ref_runtime) {
  std::vector<py::object> inputs = s.fresh_inputs(fresh_seed());
  nlohmann::json health = task_health(s, inputs);
  if (s.req.options.time_kernels) ref_runtime = time_reference(s, inputs);
  return health;
}

}  // namespace kernelrl::eval
