// GgufFile's typed metadata accessors. Values were bounds-checked when the file was opened, so
// decoding here only reads inside the map; type mismatches are errors naming the key.
#include <charconv>
#include <cstring>
#include <limits>

#include "weights/gguf.hpp"

namespace kernelrl::weights {

namespace {

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

bool is_integer(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
      return true;
    default:
      return false;
  }
}

bool is_float(GgufValueType t) { return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64; }


// An integer of type `t` at `p`; false when it is a uint64 too large for int64.
bool decode_int(GgufValueType t, const std::byte* p, std::int64_t& out) {
  switch (t) {
    case GgufValueType::UINT8: out = load<std::uint8_t>(p); return true;
    case GgufValueType::INT8: out = load<std::int8_t>(p); return true;
    case GgufValueType::UINT16: out = load<std::uint16_t>(p); return true;
    case GgufValueType::INT16: out = load<std::int16_t>(p); return true;
    case GgufValueType::UINT32: out = load<std::uint32_t>(p); return true;
    case GgufValueType::INT32: out = load<std::int32_t>(p); return true;
    case GgufValueType::INT64: out = load<std::int64_t>(p); return true;
    default: {
      auto u = load<std::uint64_t>(p);
      if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
      out = static_cast<std::int64_t>(u);
      return true;
    }
  }
}

// A float32 as the double of its shortest round-trip decimal (1e-5f -> 1e-5, not 9.99999974e-6).
double widen_float(float f) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  double d = f;
  if (ec == std::errc()) std::from_chars(buf, end, d);
  return d;
}

double decode_float(GgufValueType t, const std::byte* p) {
  if (t == GgufValueType::FLOAT32) return widen_float(load<float>(p));
  if (t == GgufValueType::FLOAT64) return load<double>(p);
  std::int64_t i = 0;
  decode_int(t, p, i);
  return static_cast<double>(i);
}

}  // namespace

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

common::Expected<const GgufValue*> GgufFile::lookup(std::string_view key, const char* wanted) const {
  const GgufValue* v = find(key);
  if (v == nullptr) {
    return common::make_error(path().string() + ": metadata key '" + std::string(key) + "' is missing (wanted " +
                              wanted + ")");
  }
  return v;
}

common::Expected<std::string> GgufFile::get_string(std::string_view key) const {
  auto v = lookup(key, "a string");
  if (!v) return v.error();
  if ((*v)->type != GgufValueType::STRING) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is " +
                              gguf_value_type_name((*v)->type) + ", not a string");
  }
  const std::byte* p = file_->bytes().data() + (*v)->offset;
  auto n = load<std::uint64_t>(p);
  return std::string(reinterpret_cast<const char*>(p + 8), static_cast<std::size_t>(n));
}

common::Expected<std::int64_t> GgufFile::get_int(std::string_view key) const {
  auto v = lookup(key, "an integer");
  if (!v) return v.error();
  if (!is_integer((*v)->type)) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is " +
                              gguf_value_type_name((*v)->type) + ", not an integer");
  }
  std::int64_t out = 0;
  if (!decode_int((*v)->type, file_->bytes().data() + (*v)->offset, out)) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is too large for int64");
  }
  return out;
}

common::Expected<double> GgufFile::get_float(std::string_view key) const {
  auto v = lookup(key, "a number");
  if (!v) return v.error();
  if (!is_float((*v)->type) && !is_integer((*v)->type)) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is " +
                              gguf_value_type_name((*v)->type) + ", not a number");
  }
  return decode_float((*v)->type, file_->bytes().data() + (*v)->offset);
}

common::Expected<bool> GgufFile::get_bool(std::string_view key) const {
  auto v = lookup(key, "a bool");
  if (!v) return v.error();
  if ((*v)->type != GgufValueType::BOOL) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is " +
                              gguf_value_type_name((*v)->type) + ", not a bool");
  }
  return load<std::uint8_t>(file_->bytes().data() + (*v)->offset) != 0;
}

common::Expected<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
  auto v = lookup(key, "an array of strings");
  if (!v) return v.error();
  if ((*v)->type != GgufValueType::ARRAY || (*v)->element_type != GgufValueType::STRING) {
    std::string is = (*v)->type == GgufValueType::ARRAY ? "an array of " + gguf_value_type_name((*v)->element_type)
                                                        : gguf_value_type_name((*v)->type);
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is " + is +
                              ", not an array of strings");
  }
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>((*v)->n_items));
  const std::byte* p = file_->bytes().data() + (*v)->offset;
  for (std::uint64_t i = 0; i < (*v)->n_items; ++i) {
    auto n = load<std::uint64_t>(p);
    out.emplace_back(reinterpret_cast<const char*>(p + 8), static_cast<std::size_t>(n));
    p += 8 + n;
  }
  return out;
}

common::Expected<std::vector<std::int64_t>> GgufFile::get_int_array(std::string_view key) const {
  auto v = lookup(key, "an array of integers");
  if (!v) return v.error();
  if ((*v)->type != GgufValueType::ARRAY || !is_integer((*v)->element_type)) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is not an array of integers");
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>((*v)->n_items));
  const std::byte* p = file_->bytes().data() + (*v)->offset;
  std::size_t step = gguf_value_size((*v)->element_type);
  for (std::size_t i = 0; i < out.size(); ++i, p += step) {
    if (!decode_int((*v)->element_type, p, out[i])) {
      return common::make_error(path().string() + ": metadata '" + std::string(key) + "' item " + std::to_string(i) +
                                " is too large for int64");
    }
  }
  return out;
}

common::Expected<std::vector<double>> GgufFile::get_float_array(std::string_view key) const {
  auto v = lookup(key, "an array of numbers");
  if (!v) return v.error();
  if ((*v)->type != GgufValueType::ARRAY ||
      !(is_float((*v)->element_type) || is_integer((*v)->element_type))) {
    return common::make_error(path().string() + ": metadata '" + std::string(key) + "' is not an array of numbers");
  }
  std::vector<double> out(static_cast<std::size_t>((*v)->n_items));
  const std::byte* p = file_->bytes().data() + (*v)->offset;
  std::size_t step = gguf_value_size((*v)->element_type);
  for (std::size_t i = 0; i < out.size(); ++i, p += step) {
    // Array items keep their exact float32 value (scores are compared, not printed).
    out[i] = (*v)->element_type == GgufValueType::FLOAT32 ? static_cast<double>(load<float>(p))
                                                          : decode_float((*v)->element_type, p);
  }
  return out;
}

}  // namespace kernelrl::weights
