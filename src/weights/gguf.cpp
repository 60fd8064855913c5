// GgufFile::open: the parser. Reads the header, walks every metadata value (checking each length
// against the bytes left), reads the tensor infos, then places the data section and checks that
// each tensor lies inside the file. Layout (all little-endian): "GGUF", u32 version, u64 n_tensors,
// u64 n_kv, n_kv x (string key, u32 type, value), n_tensors x (string name, u32 n_dims,
// n_dims x u64 ne, u32 ggml type, u64 offset), padding to `alignment`, tensor data.
#include "weights/gguf.hpp"

#include <cstring>
#include <limits>

namespace kernelrl::weights {

namespace {

constexpr std::uint32_t max_dims = 4;        // GGML_MAX_DIMS
constexpr int max_array_nesting = 4;         // arrays of arrays of ... (the spec allows nesting)


bool known_value_type(std::uint32_t id) { return id <= static_cast<std::uint32_t>(GgufValueType::FLOAT64); }

// A read position in the mapped bytes that records the first failure as a message naming the
// file, what was being read and where.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, std::string path) : bytes_(bytes), path_(std::move(path)) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  bool fail(const std::string& message) {
    if (error_.empty()) error_ = path_ + ": " + message;
    return false;
  }

  // `what` + `detail` name the item in the error; they are joined only when reading fails.
  bool skip(std::uint64_t n, std::string_view what, std::string_view detail = "") {
    if (failed()) return false;
    if (n > remaining()) {
      return fail("truncated or corrupt GGUF: " + std::string(what) + std::string(detail) + " at offset " +
                  std::to_string(pos_) + " needs " + std::to_string(n) + " bytes, only " +
                  std::to_string(remaining()) + " remain (file is " + std::to_string(bytes_.size()) + " bytes)");
    }
    pos_ += static_cast<std::size_t>(n);
    return true;
  }

  template <class T>
  bool read(T& out, std::string_view what, std::string_view detail = "") {
    std::size_t at = pos_;
    if (!skip(sizeof(T), what, detail)) return false;
    std::memcpy(&out, bytes_.data() + at, sizeof(T));
    return true;
  }

  bool read_string(std::string& out, std::string_view what, std::string_view detail = "") {
    std::uint64_t n = 0;
    if (!read(n, what, detail)) return false;
    std::size_t at = pos_;
    if (!skip(n, what, detail)) return false;
    out.assign(reinterpret_cast<const char*>(bytes_.data() + at), static_cast<std::size_t>(n));
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
  std::string path_;
  std::size_t pos_ = 0;
  std::string error_;
};

// Steps over one value of `type` (checking every length); `what` names it in errors.
bool skip_value(Cursor& c, GgufValueType type, const std::string& what, int depth) {
  if (std::size_t n = gguf_value_size(type); n > 0) return c.skip(n, what);
  if (type == GgufValueType::STRING) {
    std::uint64_t len = 0;
    return c.read(len, what, " (string length)") && c.skip(len, what, " (string bytes)");
  }
  // ARRAY: u32 item type, u64 count, items.
  std::uint32_t item_type = 0;
  std::uint64_t n_items = 0;
  if (!c.read(item_type, what, " (array item type)") || !c.read(n_items, what, " (array length)")) return false;
  if (!known_value_type(item_type)) {
    return c.fail(what + ": array item type id " + std::to_string(item_type) + " is not a GGUF value type");
  }
  auto item = static_cast<GgufValueType>(item_type);
  if (item == GgufValueType::ARRAY && depth >= max_array_nesting) {
    return c.fail(what + ": arrays nested deeper than " + std::to_string(max_array_nesting));
  }
  std::size_t item_size = gguf_value_size(item);
  std::size_t min_item = item_size > 0 ? item_size : (item == GgufValueType::STRING ? 8 : 12);
  if (n_items > c.remaining() / min_item) {
    return c.fail("truncated or corrupt GGUF: " + what + " claims " + std::to_string(n_items) +
                  " items, more than the " + std::to_string(c.remaining()) + " bytes left can hold");
  }
  if (item_size > 0) return c.skip(n_items * item_size, what, " (array items)");
  for (std::uint64_t i = 0; i < n_items; ++i) {
    if (!skip_value(c, item, what, depth + 1)) return false;
  }
  return true;
}

bool read_header(Cursor& c, std::uint32_t& version, std::uint64_t& n_tensors, std::uint64_t& n_kv) {
  char magic[4] = {};
  if (c.remaining() < 4) return c.fail("not a GGUF file: " + std::to_string(c.remaining()) + " bytes, too short");
  c.read(magic, "magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) {
    std::string shown;
    for (char ch : magic) shown += (ch >= 32 && ch < 127) ? ch : '?';
    return c.fail("not a GGUF file: magic is '" + shown + "', expected 'GGUF'");
  }
  if (!c.read(version, "version")) return false;
  if (version == 0x02000000u || version == 0x03000000u) {
    return c.fail("big-endian GGUF files are not supported");
  }
  if (version != 2 && version != 3) {
    return c.fail("GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
  }
  if (!c.read(n_tensors, "tensor count") || !c.read(n_kv, "metadata count")) return false;
  // Each metadata entry takes at least 13 bytes and each tensor info at least 28.
  if (n_kv > c.remaining() / 13) {
    return c.fail("corrupt GGUF: metadata count " + std::to_string(n_kv) + " is impossible in a file of this size");
  }
  if (n_tensors > c.remaining() / 28) {
    return c.fail("corrupt GGUF: tensor count " + std::to_string(n_tensors) +
                  " is impossible in a file of this size");
  }
  return true;
}

// One metadata entry: its key, and where its value lies (arrays: after the 12-byte item type and count).
bool read_key_value(Cursor& c, std::uint64_t index, std::span<const std::byte> bytes, std::string& key, GgufValue& v) {
  std::uint32_t type = 0;
  if (!c.read_string(key, "metadata entry " + std::to_string(index), " (key)")) return false;
  std::string what = "metadata '" + key + "'";
  if (!c.read(type, what, " (value type)")) return false;
  if (!known_value_type(type)) {
    return c.fail("corrupt GGUF: " + what + " has value type id " + std::to_string(type) + ", not a GGUF type");
  }
  v.type = static_cast<GgufValueType>(type);
  v.offset = c.pos();
  if (!skip_value(c, v.type, what, 0)) return false;
  if (v.type == GgufValueType::ARRAY) {  // skip_value checked that the 12 bytes are there
    std::uint32_t item_type = 0;
    std::memcpy(&item_type, bytes.data() + v.offset, 4);
    std::memcpy(&v.n_items, bytes.data() + v.offset + 4, 8);
    v.element_type = static_cast<GgufValueType>(item_type);
    v.offset += 12;
  }
  return true;
}

// One tensor info: name, dims (innermost first), ggml type, offset in the data section.
bool read_tensor_info(Cursor& c, std::uint64_t index, std::uint64_t alignment, GgufTensorInfo& info) {
  std::string what = "tensor info " + std::to_string(index);
  if (!c.read_string(info.name, what, " (name)")) return false;
  what = "tensor '" + info.name + "'";
  std::uint32_t n_dims = 0;
  if (!c.read(n_dims, what, " (dimension count)")) return false;
  if (n_dims == 0 || n_dims > max_dims) {
    return c.fail("corrupt GGUF: " + what + " has " + std::to_string(n_dims) + " dimensions (1 to " +
                  std::to_string(max_dims) + " allowed)");
  }
  info.n_elements = 1;
  for (std::uint32_t d = 0; d < n_dims; ++d) {
    std::uint64_t ne = 0;
    if (!c.read(ne, what, " (dimension)")) return false;
    auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (ne == 0 || ne > max / static_cast<std::uint64_t>(info.n_elements)) {
      return c.fail("corrupt GGUF: " + what + " has dimension " + std::to_string(d) + " = " + std::to_string(ne) +
                    " (zero, or the element count overflows)");
    }
    info.ne.push_back(static_cast<std::int64_t>(ne));
    info.n_elements *= static_cast<std::int64_t>(ne);
  }
  info.shape.assign(info.ne.rbegin(), info.ne.rend());
  std::uint32_t type = 0;
  if (!c.read(type, what, " (type)") || !c.read(info.offset, what, " (offset)")) return false;
  info.type = static_cast<GgmlType>(type);
  auto layout = ggml_block_layout(info.type);
  if (!layout) return c.fail(what + " has ggml type id " + std::to_string(type) + ", which this reader does not know");
  if (info.ne[0] % layout->block_size != 0) {
    return c.fail("corrupt GGUF: " + what + " is " + ggml_type_name(info.type) + " but its row length " +
                  std::to_string(info.ne[0]) + " is not a multiple of the block size " +
                  std::to_string(layout->block_size));
  }
  auto n_blocks = static_cast<std::uint64_t>(info.n_elements / layout->block_size);
  auto type_size = static_cast<std::uint64_t>(layout->type_size);
  if (n_blocks > std::numeric_limits<std::uint64_t>::max() / type_size) {
    return c.fail("corrupt GGUF: " + what + " is too large (" + std::to_string(info.n_elements) + " elements)");
  }
  info.n_bytes = n_blocks * type_size;
  if (info.offset % alignment != 0) {
    return c.fail("corrupt GGUF: " + what + " has data offset " + std::to_string(info.offset) +
                  ", not a multiple of the alignment " + std::to_string(alignment));
  }
  return true;
}

}  // namespace

std::string gguf_value_type_name(GgufValueType type) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  auto id = static_cast<std::uint32_t>(type);
  if (id < std::size(names)) return names[id];
  return "value type " + std::to_string(id);
}

common::Expected<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  GgufFile f;
  f.file_ = *mapped;
  Cursor c(f.file_->bytes(), path.string());
  std::uint64_t n_tensors = 0, n_kv = 0;
  if (!read_header(c, f.version_, n_tensors, n_kv)) return common::make_error(c.error());

  for (std::uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    GgufValue v;
    if (!read_key_value(c, i, f.file_->bytes(), key, v)) return common::make_error(c.error());
    if (f.values_.count(key) != 0) {
      return common::make_error(path.string() + ": corrupt GGUF: metadata key '" + key + "' appears twice");
    }
    f.keys_.push_back(key);
    f.values_.emplace(std::move(key), v);
  }

  if (f.has("general.alignment")) {
    auto alignment = f.get_int("general.alignment");
    if (!alignment) return alignment.error();
    if (*alignment <= 0 || (*alignment & (*alignment - 1)) != 0) {
      return common::make_error(path.string() + ": general.alignment is " + std::to_string(*alignment) +
                                ", not a positive power of two");
    }
    f.alignment_ = static_cast<std::uint64_t>(*alignment);
  }

  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo info;
    if (!read_tensor_info(c, i, f.alignment_, info)) return common::make_error(c.error());
    if (!f.tensor_index_.emplace(info.name, f.tensors_.size()).second) {
      return common::make_error(path.string() + ": corrupt GGUF: tensor '" + info.name + "' appears twice");
    }
    f.tensors_.push_back(std::move(info));
  }

  // The data section starts at the next multiple of the alignment; every tensor must end inside it.
  std::uint64_t end_of_infos = c.pos();
  f.data_offset_ = (end_of_infos + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  std::uint64_t data_bytes = f.data_offset_ <= f.file_->size() ? f.file_->size() - f.data_offset_ : 0;
  for (const auto& t : f.tensors_) {
    if (t.offset > data_bytes || t.n_bytes > data_bytes - t.offset) {
      return common::make_error(path.string() + ": truncated or corrupt GGUF: tensor '" + t.name + "' (" +
                                ggml_type_name(t.type) + ", " + std::to_string(t.n_bytes) + " bytes at data offset " +
                                std::to_string(t.offset) + ") runs past the end of the file (the data section holds " +
                                std::to_string(data_bytes) + " bytes)");
    }
  }
  return f;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::byte> GgufFile::tensor_data(const GgufTensorInfo& info) const {
  return file_->bytes().subspan(static_cast<std::size_t>(data_offset_ + info.offset),
                                static_cast<std::size_t>(info.n_bytes));
}

std::size_t gguf_value_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL:
      return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
      return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32:
      return 4;
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace kernelrl::weights
