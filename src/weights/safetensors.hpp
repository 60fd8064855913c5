// safetensors files (Hugging Face's weight format): an 8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the
// tensor bytes. The reader maps the file and validates every entry as the reference implementation
// does (offsets in bounds, sizes matching dtype x shape, the buffer covered without gaps or
// overlaps); the writer lays tensors out like the reference (largest dtype first, then by name;
// header padded with spaces to a multiple of 8) and replaces the target file atomically.
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
#include "weights/mapped_file.hpp"

namespace kernelrl::weights {

enum class SafetensorsDtype { BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

// "F32", "BF16", ...
std::string safetensors_dtype_name(SafetensorsDtype dtype);
// Bytes per element.
std::size_t safetensors_dtype_size(SafetensorsDtype dtype);

// One tensor: its bytes (row-major, little-endian) are a view owned by someone else (the reader's
// map, or the caller's buffer when writing).
struct TensorView {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::int64_t> shape;  // {} is a scalar
  std::span<const std::byte> data;  // product(shape) x dtype size bytes
};

// Immutable once opened: copies share the map, and any number of threads may read at once.
class SafetensorsFile {
 public:
  // Maps and validates `path`; errors start with the path and name the entry at fault.
  static common::Expected<SafetensorsFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_->path(); }
  // Tensors sorted by name; their data views stay valid while this object or a copy lives.
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // The tensor called `name`, or null.
  const TensorView* find(std::string_view name) const;
  // The header's "__metadata__" (string to string), empty when absent.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  std::shared_ptr<const MappedFile> file_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Writes `tensors` (unique names; sizes must match dtype x shape) and `metadata` to `path` through
// a temporary file beside it that is renamed over `path` only once complete. Errors name the
// tensor or the file.
common::Fallible write_safetensors(const std::filesystem::path& path, const std::vector<TensorView>& tensors,
                                   const std::map<std::string, std::string>& metadata = {});

// The safetensors files of a Hugging Face model folder: model.safetensors, or the shards named by
// model.safetensors.index.json's weight_map (each listed tensor must be in the shard it names).
// Errors name the folder, the index or the missing shard.
common::Expected<std::vector<SafetensorsFile>> open_hf_safetensors(const std::filesystem::path& dir);

}  // namespace kernelrl::weights
