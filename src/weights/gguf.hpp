// A GGUF (v2/v3) file read in place: header, metadata key/values, tensor infos and the bytes of each
// tensor, from a read-only memory map. Every length, count and offset is checked against the file
// at open, so a truncated or corrupt file is an error that names the file and what is wrong; after
// a successful open the accessors cannot read out of bounds. Spec: ggml's docs/gguf.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "weights/ggml_types.hpp"
#include "weights/mapped_file.hpp"

namespace kernelrl::weights {

enum class GgufValueType : std::uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

// "uint32", "string", "array", ...
std::string gguf_value_type_name(GgufValueType type);

// Bytes of one value of a fixed-size type (numbers, bool); 0 for string and array.
std::size_t gguf_value_size(GgufValueType type);

// Where one metadata value lies in the file; decoded on demand by GgufFile's accessors.
struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;          // ARRAY for arrays
  GgufValueType element_type = GgufValueType::UINT8;  // arrays: the items' type
  std::uint64_t n_items = 1;                          // arrays: how many items; scalars: 1
  std::size_t offset = 0;  // file offset of the value (arrays: of the first item)
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<std::int64_t> ne;     // GGUF's order, innermost first: ne[0] is the row length
  std::vector<std::int64_t> shape;  // row-major, outermost first (ne reversed): {rows, row length}
  std::int64_t n_elements = 0;
  std::uint64_t offset = 0;   // of the first byte, from the start of the data section
  std::uint64_t n_bytes = 0;  // from the type's block layout
};

// Immutable once opened: copies share the map, and any number of threads may read at once.
class GgufFile {
 public:
  // Maps and parses `path`; every error message starts with the path and says what is wrong
  // (wrong magic, unsupported version, truncated at which item, offset past the end, ...).
  static common::Expected<GgufFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_->path(); }
  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }      // general.alignment, default 32
  std::uint64_t data_offset() const { return data_offset_; }  // file offset of the data section
  std::uint64_t file_size() const { return file_->size(); }

  // Metadata keys in file order.
  const std::vector<std::string>& keys() const { return keys_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The value's location and type, or null when `key` is absent.
  const GgufValue* find(std::string_view key) const;

  // Typed accessors: the value of `key`, or an error naming the key (and the file) when it is
  // missing or of another type. get_int takes any integer type (an unsigned 64-bit value over
  // INT64_MAX is an error); get_float takes float32/float64 and integers (a float32 becomes the
  // double of its shortest decimal form, so 1e-5f reads as 1e-5).
  common::Expected<std::string> get_string(std::string_view key) const;
  common::Expected<std::int64_t> get_int(std::string_view key) const;
  common::Expected<double> get_float(std::string_view key) const;
  common::Expected<bool> get_bool(std::string_view key) const;
  common::Expected<std::vector<std::string>> get_string_array(std::string_view key) const;
  common::Expected<std::vector<std::int64_t>> get_int_array(std::string_view key) const;
  common::Expected<std::vector<double>> get_float_array(std::string_view key) const;

  // Tensor infos in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  // The tensor called `name`, or null.
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes inside the map (valid while this GgufFile or a copy of it lives).
  std::span<const std::byte> tensor_data(const GgufTensorInfo& info) const;

 private:
  GgufFile() = default;
  common::Expected<const GgufValue*> lookup(std::string_view key, const char* wanted) const;

  std::shared_ptr<const MappedFile> file_;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::vector<std::string> keys_;
  std::map<std::string, GgufValue, std::less<>> values_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace kernelrl::weights
