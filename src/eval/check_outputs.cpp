#include "eval/check_outputs.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "eval/checker.hpp"
#include "eval/device_screen.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

OutputCheck fail(int index, std::string message) {
  OutputCheck r;
  r.details.output_index = index;
  r.details.message = std::move(message);
  return r;
}

// The element-by-element verdict of checker.hpp on host copies, with its description;
// `relative_l2` gets the whole output's relative L2 error.
OutputCheck compare_on_host(const py::object& actual, const py::object& expected, int idx, const std::string& label,
                            Tolerance tol, const nlohmann::json& tolerance_used, double& relative_l2) {
  HostTensor a = host_view(actual);
  HostTensor e = host_view(expected);
  CompareResult cmp = compare_buffers(a.data, e.data, e.numel, e.dtype, tol);
  relative_l2 = cmp.relative_l2_error();
  if (cmp.ok) {
    OutputCheck ok;
    ok.ok = true;
    return ok;
  }
  OutputCheck r = fail(idx, "");
  r.tolerance = tolerance_used;
  r.details.n_mismatch = cmp.n_mismatch;
  r.details.n_checked = cmp.n_checked;
  r.details.max_abs_error = cmp.max_abs_error;
  r.details.max_rel_error = cmp.max_rel_error;
  if (cmp.first_bad_index >= 0) r.details.first_bad_index = unravel(cmp.first_bad_index, e.shape);
  r.details.message = describe(cmp, label, e.dtype, e.shape) + " [atol " + short_number(tol.atol) + ", rtol " +
                      short_number(tol.rtol) + "]";
  return r;
}

}  // namespace

OutputCheck check_outputs(const std::vector<py::object>& actual, const std::vector<py::object>& expected,
                          const EvalOptions& options, common::RuleSet rules) {
  if (actual.size() != expected.size()) {
    return fail(-1, "returned " + std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size()));
  }
  const bool kernelbench = common::kernelbench_acceptance(rules);
  OutputCheck result;
  result.tolerance = nlohmann::json::object();
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const int idx = static_cast<int>(i);
    const std::string label = "output " + std::to_string(i);
    if (!is_tensor(actual[i])) return fail(idx, label + " is not a tensor");
    const auto shape = shape_of(actual[i]);
    const auto expected_shape = shape_of(expected[i]);
    if (shape != expected_shape) {
      return fail(idx, label + " has shape " + shape_text(shape) + ", expected " + shape_text(expected_shape));
    }
    const std::string dt = dtype_name(actual[i]);
    if (dt != dtype_name(expected[i])) return fail(idx, label + " has dtype " + dt + ", expected " + dtype_name(expected[i]));
    auto dtype = parse_dtype(dt);
    if (!dtype) return fail(idx, label + " has unsupported dtype " + dt);
    Tolerance tol = kernelbench ? kernelbench_tolerance(*dtype) : default_tolerance(*dtype);
    if (is_floating(*dtype)) {
      if (options.atol >= 0) tol.atol = options.atol;
      if (options.rtol >= 0) tol.rtol = options.rtol;
    }
    result.tolerance[dt] = {{"atol", tol.atol}, {"rtol", tol.rtol}};
    const bool on_device = actual[i].attr("is_cuda").cast<bool>() && expected[i].attr("is_cuda").cast<bool>();
    double rel_l2 = 0;
    Screen screen;
    if (on_device) screen = screen_outputs(actual[i], expected[i], *dtype, tol);
    if (!on_device || screen.n_mismatch != 0) {
      OutputCheck bad = compare_on_host(actual[i], expected[i], idx, label, tol, result.tolerance, rel_l2);
      if (!bad.ok) return bad;
    } else {
      rel_l2 = screen.relative_l2;
    }
    // Every element passed; the output as a whole must too (tiny outputs hide in atol).
    if (is_floating(*dtype)) {
      const double whole_rtol = kernelbench ? std::max(tol.rtol, default_tolerance(*dtype).rtol) : tol.rtol;
      if (!(rel_l2 <= whole_rtol)) {
        OutputCheck bad = fail(idx, label + ": every element is within the tolerance but the output as a whole is not: "
                                        "relative L2 error " + short_number(rel_l2) + " > rtol " + short_number(whole_rtol) +
                                        " (e.g. zeros where the expected values are all small)");
        bad.tolerance = result.tolerance;
        bad.details.max_rel_error = rel_l2;
        return bad;
      }
    }
  }
  result.ok = true;
  return result;
}


int first_changed(const std::vector<py::object>& now, const std::vector<py::object>& before) {
  for (std::size_t i = 0; i < now.size() && i < before.size(); ++i) {
    if (is_tensor(now[i]) && !bytes_equal(now[i], before[i])) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace kernelrl::eval
