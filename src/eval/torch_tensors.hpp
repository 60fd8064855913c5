// Interop between torch tensors (Python objects in the embedded interpreter) and the C++ side:
// DLTensor views for the candidate ABI, poisoning, exact copies and host copies for the checker.
// Python objects: use on the interpreter's thread only.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "eval/dtype.hpp"
#include "kernelrl/abi.h"

namespace kernelrl::eval {

// DLTensor views of a list of tensors, with the shape and stride storage they point to. The
// evaluator keeps its own copy of every shape, so a candidate that scribbles on a view's shape
// array cannot change what is checked.
struct ViewSet {
  std::vector<DLTensor> views;
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::vector<std::int64_t>> strides;

  // A deep copy with its own shape and stride storage: handed to each call, so what one call
  // scribbles on its views (data pointers, shapes) never reaches the next.
  ViewSet copy() const;
};

// Builds views of the tensor elements of `tensors` (non-tensor values are skipped).
ViewSet make_views(const std::vector<pybind11::object>& tensors);

bool is_tensor(const pybind11::handle& obj);

// Tensors and values of a Python sequence as a vector, tensors moved to `device`.
std::vector<pybind11::object> to_device(const pybind11::object& values, const pybind11::object& device);

// The torch dtype of a KernelBench precision ("fp32", "fp16", "bf16": EvalOptions::precision);
// None for "" (the task's own dtypes). std::invalid_argument for any other name.
pybind11::object precision_dtype(const std::string& precision);

// `values` with each floating-point tensor cast to `dtype` (None: unchanged). KernelBench casts
// every tensor; integer and bool ones (indices, labels, masks) keep their dtype here, since a cast
// changes what they mean (docs/security.md, "Rule sets").
std::vector<pybind11::object> cast_floating(std::vector<pybind11::object> values, const pybind11::object& dtype);

// A forward's return value as a list of tensors: one tensor, or the items of a tuple/list.
std::vector<pybind11::object> output_list(const pybind11::object& ret);

// Deep copies (clone of each tensor; other values shared).
std::vector<pybind11::object> clone_all(const std::vector<pybind11::object>& values);

// Fills `t` with a value a correct kernel never leaves behind: NaN for floats, a sentinel for
// integers, 0xAB bytes for bool.
void poison(const pybind11::object& t);

// The address of a contiguous tensor's first element (device memory for a CUDA tensor); the
// tensor must outlive its use.
const void* data_address(const pybind11::object& contiguous);

// True when `a` and `b` hold the same bytes (NaNs compare by bit pattern); CUDA tensors are
// compared by the engine's kernel where it is built (device_check_kernels.hpp).
bool bytes_equal(const pybind11::object& a, const pybind11::object& b);

// A contiguous CPU tensor (bool tensors as raw bytes) kept alive with its data pointer for the
// checker.
struct HostTensor {
  pybind11::object tensor;
  const void* data = nullptr;
  std::int64_t numel = 0;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
};
// `t` on the host for a comparison made at once: a CPU tensor that is already contiguous is used
// in place, anything else is copied.
HostTensor host_view(const pybind11::object& t);

// A CPU tensor over `data` (contiguous, row-major) with the shape and dtype of `like`; it does not
// own the memory, which must outlive it and hold numel x element size bytes.
pybind11::object tensor_over(void* data, const pybind11::object& like);
// The same over device memory of CUDA device `device` (through __cuda_array_interface__; no copy).
pybind11::object device_tensor_over(void* data, const pybind11::object& like, int device);
// A tensor of `shape` and `dtype` over `data`: host memory when `cuda_device` < 0, else device memory
// of that device. What the two above make, from a shape and dtype instead of a tensor.
pybind11::object tensor_at(void* data, const std::vector<std::int64_t>& shape, DType dtype, int cuda_device);

// dst.copy_(src) for tensors of one dtype and shape, bool ones as bytes (a poisoned 0xAB stays 0xAB).
void copy_exact(const pybind11::object& dst, const pybind11::object& src);

std::vector<std::int64_t> shape_of(const pybind11::object& t);
std::string dtype_name(const pybind11::object& t);  // "float32", ...

}  // namespace kernelrl::eval
