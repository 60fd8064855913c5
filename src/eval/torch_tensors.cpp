#include "eval/torch_tensors.hpp"

#include <cstdint>
#include <stdexcept>

#include "eval/options.hpp"

#if KERNELRL_EVAL_CUDA_KERNELS
#include "eval/device_check_kernels.hpp"
#endif

namespace py = pybind11;

namespace kernelrl::eval {

namespace {
py::module_& torch() {
  static py::module_ m = py::module_::import("torch");
  return m;
}
}  // namespace

bool is_tensor(const py::handle& obj) { return py::isinstance(obj, torch().attr("Tensor")); }

std::vector<std::int64_t> shape_of(const py::object& t) {
  std::vector<std::int64_t> s;
  for (auto d : t.attr("shape")) s.push_back(d.cast<std::int64_t>());
  return s;
}

std::string dtype_name(const py::object& t) {
  std::string s = py::str(t.attr("dtype"));
  return s.rfind("torch.", 0) == 0 ? s.substr(6) : s;
}

ViewSet ViewSet::copy() const {
  ViewSet c;
  c.views = views;
  c.shapes = shapes;
  c.strides = strides;
  for (std::size_t i = 0; i < c.views.size(); ++i) {
    c.views[i].shape = c.shapes[i].data();
    c.views[i].strides = c.strides[i].data();
  }
  return c;
}

ViewSet make_views(const std::vector<py::object>& tensors) {
  ViewSet set;
  for (const auto& t : tensors) {
    if (!is_tensor(t)) continue;
    set.shapes.push_back(shape_of(t));
    std::vector<std::int64_t> st;
    for (auto d : t.attr("stride")()) st.push_back(d.cast<std::int64_t>());
    set.strides.push_back(std::move(st));
  }
  std::size_t k = 0;
  for (const auto& t : tensors) {
    if (!is_tensor(t)) continue;
    auto dtype = parse_dtype(dtype_name(t));
    if (!dtype) throw std::runtime_error("unsupported tensor dtype " + dtype_name(t));
    auto [code, bits] = to_dlpack(*dtype);
    DLTensor v{};
    v.data = reinterpret_cast<void*>(t.attr("data_ptr")().cast<std::uintptr_t>());
    bool cuda = t.attr("is_cuda").cast<bool>();
    v.device = DLDevice{cuda ? kDLCUDA : kDLCPU, cuda ? t.attr("get_device")().cast<std::int32_t>() : 0};
    v.ndim = static_cast<std::int32_t>(set.shapes[k].size());
    v.dtype = DLDataType{code, bits, 1};
    v.shape = set.shapes[k].data();
    v.strides = set.strides[k].data();
    v.byte_offset = 0;
    set.views.push_back(v);
    ++k;
  }
  return set;
}

std::vector<py::object> to_device(const py::object& values, const py::object& device) {
  std::vector<py::object> out;
  for (auto v : values) {
    py::object o = py::reinterpret_borrow<py::object>(v);
    out.push_back(is_tensor(o) ? o.attr("to")(device) : o);
  }
  return out;
}

py::object precision_dtype(const std::string& precision) {
  if (precision.empty()) return py::none();
  auto dtype = precision_torch_dtype(precision);
  if (!dtype) throw std::invalid_argument("precision '" + precision + "' is not one of fp32, fp16, bf16");
  return py::module_::import("torch").attr(dtype->c_str());
}

std::vector<py::object> cast_floating(std::vector<py::object> values, const py::object& dtype) {
  if (dtype.is_none()) return values;
  for (auto& v : values) {
    if (is_tensor(v) && v.attr("is_floating_point")().cast<bool>()) v = v.attr("to")(dtype);
  }
  return values;
}

std::vector<py::object> output_list(const py::object& ret) {
  std::vector<py::object> out;
  if (py::isinstance<py::tuple>(ret) || py::isinstance<py::list>(ret)) {
    for (auto v : ret) out.push_back(py::reinterpret_borrow<py::object>(v));
  } else {
    out.push_back(ret);
  }
  return out;
}

std::vector<py::object> clone_all(const std::vector<py::object>& values) {
  std::vector<py::object> out;
  for (const auto& v : values) out.push_back(is_tensor(v) ? v.attr("clone")() : v);
  return out;
}

void poison(const py::object& t) {
  std::string d = dtype_name(t);
  if (d == "bool") {
    t.attr("view")(torch().attr("uint8")).attr("fill_")(0xAB);
  } else if (t.attr("is_floating_point")().cast<bool>()) {
    t.attr("fill_")(py::float_(NAN));
  } else if (d == "uint8") {
    t.attr("fill_")(0xAB);
  } else if (d == "int8") {
    t.attr("fill_")(-85);
  } else {
    t.attr("fill_")(-0x2B2B2B2B);
  }
}

const void* data_address(const py::object& contiguous) {
  return reinterpret_cast<const void*>(contiguous.attr("data_ptr")().cast<std::uintptr_t>());
}

bool bytes_equal(const py::object& a, const py::object& b) {
  if (shape_of(a) != shape_of(b) || dtype_name(a) != dtype_name(b)) return false;
#if KERNELRL_EVAL_CUDA_KERNELS
  if (a.attr("is_cuda").cast<bool>() && b.attr("is_cuda").cast<bool>()) {
    py::object ca = a.attr("detach")().attr("contiguous")(), cb = b.attr("detach")().attr("contiguous")();
    const std::int64_t bytes = ca.attr("numel")().cast<std::int64_t>() * ca.attr("element_size")().cast<std::int64_t>();
    auto equal = gpu::bytes_equal_on_device(data_address(ca), data_address(cb), bytes);
    if (!equal) throw std::runtime_error(equal.error().message);
    return *equal;
  }
#endif
  py::object u8 = torch().attr("uint8");
  py::object ca = a.attr("contiguous")().attr("view")(-1).attr("view")(u8);
  py::object cb = b.attr("contiguous")().attr("view")(-1).attr("view")(u8);
  return torch().attr("equal")(ca, cb).cast<bool>();
}

namespace {
HostTensor describe_host(py::object cpu_tensor, const py::object& original) {
  HostTensor h;
  h.tensor = std::move(cpu_tensor);
  h.data = data_address(h.tensor);
  h.numel = h.tensor.attr("numel")().cast<std::int64_t>();
  auto dtype = parse_dtype(dtype_name(original));
  if (!dtype) throw std::runtime_error("unsupported tensor dtype " + dtype_name(original));
  h.dtype = *dtype;
  h.shape = shape_of(original);
  return h;
}
}  // namespace

// Bool tensors are moved as their bytes: a copy as bool would turn a poisoned 0xAB into a 1.
py::object raw(const py::object& t) {
  py::object d = t.attr("detach")();
  return dtype_name(t) == "bool" ? d.attr("contiguous")().attr("view")(torch().attr("uint8")) : d;
}

HostTensor host_view(const py::object& t) {
  return describe_host(raw(t).attr("to")("cpu").attr("contiguous")(), t);
}

py::object tensor_over(void* data, const py::object& like) {
  auto dtype = parse_dtype(dtype_name(like));
  if (!dtype) throw std::runtime_error("unsupported tensor dtype " + dtype_name(like));
  return tensor_at(data, shape_of(like), *dtype, -1);
}

py::object device_tensor_over(void* data, const py::object& like, int device) {
  auto dtype = parse_dtype(dtype_name(like));
  if (!dtype) throw std::runtime_error("unsupported tensor dtype " + dtype_name(like));
  return tensor_at(data, shape_of(like), *dtype, device);
}

// Host memory through a memoryview (torch.frombuffer), device memory through
// __cuda_array_interface__: bytes first, then viewed as the dtype and the shape.
py::object tensor_at(void* data, const std::vector<std::int64_t>& shape, DType dtype, int cuda_device) {
  const py::object torch_dtype = torch().attr(std::string(to_string(dtype)).c_str());
  py::tuple dims(shape.size());
  std::int64_t numel = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    dims[i] = shape[i];
    numel *= shape[i];
  }
  const std::int64_t n_bytes = numel * static_cast<std::int64_t>(element_size_bytes(dtype));
  py::dict kw;
  kw["dtype"] = torch_dtype;
  if (cuda_device >= 0) kw["device"] = "cuda:" + std::to_string(cuda_device);
  if (n_bytes == 0) return torch().attr("empty")(dims, **kw);  // frombuffer refuses an empty buffer
  py::object bytes;
  if (cuda_device < 0) {
    py::memoryview mv = py::memoryview::from_memory(data, static_cast<py::ssize_t>(n_bytes), false);
    py::dict u8;
    u8["dtype"] = torch().attr("uint8");
    bytes = torch().attr("frombuffer")(mv, **u8);
  } else {
    py::dict cai;
    cai["shape"] = py::make_tuple(n_bytes);
    cai["typestr"] = "|u1";
    cai["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(data), false);
    cai["strides"] = py::none();
    cai["version"] = 3;
    py::dict attrs;
    attrs["__cuda_array_interface__"] = cai;
    py::object holder = py::module_::import("types").attr("SimpleNamespace")(**attrs);
    py::dict on;
    on["device"] = kw["device"];
    bytes = torch().attr("as_tensor")(holder, **on);
  }
  return bytes.attr("view")(torch_dtype).attr("view")(dims);
}

void copy_exact(const py::object& dst, const py::object& src) {
  if (dtype_name(dst) == "bool") {
    py::object u8 = torch().attr("uint8");
    dst.attr("view")(u8).attr("copy_")(src.attr("detach")().attr("view")(u8));
  } else {
    dst.attr("copy_")(src.attr("detach")());
  }
}

}  // namespace kernelrl::eval
