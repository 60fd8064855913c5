#include "eval/device_screen.hpp"

namespace py = pybind11;

namespace kernelrl::eval {

std::int64_t count_mismatches(const py::object& actual, const py::object& expected, DType dtype, Tolerance tol) {
  py::module_ torch = py::module_::import("torch");
  py::object ok;
  if (is_floating(dtype)) {
    py::object a = actual.attr("detach")().attr("double")();
    py::object e = expected.attr("detach")().attr("double")();
    // Both finite: |a - e| <= atol + rtol * |e|. Otherwise equal (same-sign inf) or both NaN.
    py::object both_finite = torch.attr("isfinite")(a).attr("__and__")(torch.attr("isfinite")(e));
    py::object bound = e.attr("abs")().attr("mul")(tol.rtol).attr("add")(tol.atol);
    py::object close = a.attr("sub")(e).attr("abs")().attr("le")(bound);
    py::object both_nan = torch.attr("isnan")(a).attr("__and__")(torch.attr("isnan")(e));
    ok = both_finite.attr("__and__")(close).attr("__or__")(a.attr("eq")(e)).attr("__or__")(both_nan);
  } else if (dtype == DType::BOOL) {
    // Bytes, not bools: a poisoned 0xAB byte must not read as `true`.
    py::object a = actual.attr("contiguous")().attr("view")(torch.attr("uint8"));
    py::object e = expected.attr("contiguous")().attr("view")(torch.attr("uint8")).attr("ne")(0);
    ok = a.attr("le")(1).attr("__and__")(a.attr("eq")(e.attr("to")(torch.attr("uint8"))));
  } else {
    ok = actual.attr("eq")(expected);
  }
  py::object n_ok = ok.attr("sum")().attr("item")();
  std::int64_t numel = actual.attr("numel")().cast<std::int64_t>();
  return numel - n_ok.cast<std::int64_t>();
}

}  // namespace kernelrl::eval
