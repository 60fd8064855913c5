#include "eval/device_screen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#if KERNELRL_EVAL_CUDA_KERNELS
#include "eval/device_check_kernels.hpp"
#include "eval/torch_tensors.hpp"
#endif

namespace py = pybind11;

namespace kernelrl::eval {

namespace {

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

double relative_l2_error(const py::object& actual, const py::object& expected) {
  // In chunks, so float64 temporaries stay small (a host child has a bounded address space).
  constexpr std::int64_t kChunk = std::int64_t{1} << 22;
  py::module_ torch = py::module_::import("torch");
  py::object a_flat = actual.attr("detach")().attr("reshape")(-1);
  py::object e_flat = expected.attr("detach")().attr("reshape")(-1);
  const std::int64_t numel = e_flat.attr("numel")().cast<std::int64_t>();
  double diff_sq = 0, ref_sq = 0;
  for (std::int64_t begin = 0; begin < numel; begin += kChunk) {
    const std::int64_t n = std::min(kChunk, numel - begin);
    py::object a = a_flat.attr("narrow")(0, begin, n).attr("double")();
    py::object e = e_flat.attr("narrow")(0, begin, n).attr("double")();
    py::object both_finite = torch.attr("isfinite")(a).attr("__and__")(torch.attr("isfinite")(e));
    py::object zero = torch.attr("zeros_like")(e);
    py::object e0 = torch.attr("where")(both_finite, e, zero);
    py::object d0 = torch.attr("where")(both_finite, a.attr("sub")(e), zero);
    diff_sq += d0.attr("mul")(d0).attr("sum")().attr("item")().cast<double>();
    ref_sq += e0.attr("mul")(e0).attr("sum")().attr("item")().cast<double>();
  }
  return ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : 0.0;
}

#if KERNELRL_EVAL_CUDA_KERNELS
Screen screen_with_kernels(const py::object& actual, const py::object& expected, DType dtype, Tolerance tol) {
  py::object a = actual.attr("detach")().attr("contiguous")();
  py::object e = expected.attr("detach")().attr("contiguous")();
  const std::int64_t numel = e.attr("numel")().cast<std::int64_t>();
  auto sums = gpu::check_elements_on_device(data_address(a), data_address(e), numel, dtype, tol);
  if (!sums) throw std::runtime_error(sums.error().message);
  Screen s;
  s.n_mismatch = sums->n_mismatch;
  if (is_floating(dtype) && sums->sum_sq_expected > 0) s.relative_l2 = std::sqrt(sums->sum_sq_error / sums->sum_sq_expected);
  return s;
}
#endif

}  // namespace

Screen screen_outputs_with_torch(const py::object& actual, const py::object& expected, DType dtype, Tolerance tol) {
  Screen s;
  s.n_mismatch = count_mismatches(actual, expected, dtype, tol);
  if (is_floating(dtype)) s.relative_l2 = relative_l2_error(actual, expected);
  return s;
}

Screen screen_outputs(const py::object& actual, const py::object& expected, DType dtype, Tolerance tol) {
#if KERNELRL_EVAL_CUDA_KERNELS
  if (actual.attr("is_cuda").cast<bool>() && expected.attr("is_cuda").cast<bool>()) {
    return screen_with_kernels(actual, expected, dtype, tol);
  }
#endif
  return screen_outputs_with_torch(actual, expected, dtype, tol);
}

}  // namespace kernelrl::eval
