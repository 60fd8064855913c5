// safetensors reader (SafetensorsFile::open) and the sharded-folder helper; the writer is in
// safetensors_write.cpp. Validation follows the reference implementation (huggingface/safetensors):
// header at most 100 MB and starting with '{', known dtypes, data_offsets matching the size, the
// entries tiling the data buffer exactly.
#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "weights/safetensors.hpp"

namespace kernelrl::weights {

namespace {

using nlohmann::json;

constexpr std::uint64_t max_header_bytes = 100'000'000;  // the reference's MAX_HEADER_SIZE

struct DtypeRow {
  SafetensorsDtype dtype;
  const char* name;
  std::size_t size;
};

constexpr DtypeRow dtype_rows[] = {
    {SafetensorsDtype::BOOL, "BOOL", 1}, {SafetensorsDtype::U8, "U8", 1},     {SafetensorsDtype::I8, "I8", 1},
    {SafetensorsDtype::I16, "I16", 2},   {SafetensorsDtype::U16, "U16", 2},   {SafetensorsDtype::F16, "F16", 2},
    {SafetensorsDtype::BF16, "BF16", 2}, {SafetensorsDtype::I32, "I32", 4},   {SafetensorsDtype::U32, "U32", 4},
    {SafetensorsDtype::F32, "F32", 4},   {SafetensorsDtype::I64, "I64", 8},   {SafetensorsDtype::U64, "U64", 8},
    {SafetensorsDtype::F64, "F64", 8},
};

bool parse_dtype(const std::string& name, SafetensorsDtype& out) {
  for (const auto& row : dtype_rows) {
    if (name == row.name) {
      out = row.dtype;
      return true;
    }
  }
  return false;
}

// Reads one header entry into `t` (data relative to `buffer`); an error message names the entry.
common::Fallible parse_entry(const std::string& name, const json& entry, std::span<const std::byte> buffer,
                             TensorView& t, std::uint64_t& begin, std::uint64_t& end) {
  auto bad = [&](const std::string& what) { return common::make_error("tensor '" + name + "': " + what); };
  if (!entry.is_object()) return bad("header entry is not an object");
  auto dtype = entry.find("dtype");
  auto shape = entry.find("shape");
  auto offsets = entry.find("data_offsets");
  if (dtype == entry.end() || !dtype->is_string()) return bad("missing or non-string \"dtype\"");
  if (shape == entry.end() || !shape->is_array()) return bad("missing or non-array \"shape\"");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return bad("\"data_offsets\" is not a pair of non-negative integers");
  }
  t.name = name;
  if (!parse_dtype(dtype->get<std::string>(), t.dtype)) return bad("unknown dtype \"" + dtype->get<std::string>() + "\"");
  std::uint64_t n_elements = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned()) return bad("shape holds " + dim.dump() + ", not a non-negative integer");
    auto d = dim.get<std::uint64_t>();
    if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        (d != 0 && n_elements > std::numeric_limits<std::uint64_t>::max() / 16 / d)) {
      return bad("shape is too large");
    }
    n_elements *= d;
    t.shape.push_back(static_cast<std::int64_t>(d));
  }
  begin = (*offsets)[0].get<std::uint64_t>();
  end = (*offsets)[1].get<std::uint64_t>();
  std::uint64_t n_bytes = n_elements * safetensors_dtype_size(t.dtype);
  if (end < begin || end - begin != n_bytes) {
    return bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + ") do not hold " +
               std::to_string(n_bytes) + " bytes (" + safetensors_dtype_name(t.dtype) + " x shape)");
  }
  if (end > buffer.size()) {
    return bad("data_offsets end " + std::to_string(end) + " is past the end of the data (" +
               std::to_string(buffer.size()) + " bytes): file truncated or corrupt");
  }
  t.data = buffer.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(n_bytes));
  return common::Ok{};
}

// Reads "__metadata__" (an object of strings).
common::Fallible parse_metadata(const json& value, std::map<std::string, std::string>& out) {
  if (!value.is_object()) return common::make_error("\"__metadata__\" is not an object");
  for (const auto& [k, v] : value.items()) {
    if (!v.is_string()) return common::make_error("\"__metadata__\" value of '" + k + "' is not a string");
    out[k] = v.get<std::string>();
  }
  return common::Ok{};
}

}  // namespace

std::string safetensors_dtype_name(SafetensorsDtype dtype) {
  for (const auto& row : dtype_rows) {
    if (row.dtype == dtype) return row.name;
  }
  return "?";
}

std::size_t safetensors_dtype_size(SafetensorsDtype dtype) {
  for (const auto& row : dtype_rows) {
    if (row.dtype == dtype) return row.size;
  }
  return 1;
}

common::Expected<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  auto mapped = MappedFile::open(path);
  if (!mapped) return mapped.error();
  SafetensorsFile f;
  f.file_ = *mapped;
  auto bytes = f.file_->bytes();
  auto fail = [&](const std::string& what) { return common::make_error(path.string() + ": " + what); };
  if (bytes.size() < 8) return fail("not a safetensors file: " + std::to_string(bytes.size()) + " bytes, too short");
  std::uint64_t n_header = 0;
  std::memcpy(&n_header, bytes.data(), 8);
  if (n_header > max_header_bytes) return fail("corrupt safetensors: header length " + std::to_string(n_header) + " is over 100 MB");
  if (n_header > bytes.size() - 8) {
    return fail("truncated or corrupt safetensors: header length " + std::to_string(n_header) + " but only " +
                std::to_string(bytes.size() - 8) + " bytes follow");
  }
  const char* header = reinterpret_cast<const char*>(bytes.data() + 8);
  if (n_header == 0 || header[0] != '{') return fail("corrupt safetensors: the header does not start with '{'");
  json j = json::parse(header, header + n_header, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return fail("corrupt safetensors: the header is not a JSON object");

  auto buffer = bytes.subspan(static_cast<std::size_t>(8 + n_header));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // (begin, end), to check the tiling
  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      auto done = parse_metadata(entry, f.metadata_);
      if (!done) return fail(done.error().message);
      continue;
    }
    TensorView t;
    std::uint64_t begin = 0, end = 0;
    auto done = parse_entry(name, entry, buffer, t, begin, end);
    if (!done) return fail(done.error().message);
    ranges.emplace_back(begin, end);
    f.tensors_.push_back(std::move(t));
  }
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != covered) {
      return fail("corrupt safetensors: tensor data " + std::string(begin < covered ? "overlaps" : "leaves a gap") +
                  " at data offset " + std::to_string(std::min(begin, covered)));
    }
    covered = end;
  }
  if (covered != buffer.size()) {
    return fail("corrupt safetensors: the tensors cover " + std::to_string(covered) + " bytes but the data holds " +
                std::to_string(buffer.size()));
  }
  std::sort(f.tensors_.begin(), f.tensors_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return f;
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorView& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

common::Expected<std::vector<SafetensorsFile>> open_hf_safetensors(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return common::make_error(dir.string() + ": not a directory");
  auto index_path = dir / "model.safetensors.index.json";
  std::vector<SafetensorsFile> files;
  if (!std::filesystem::exists(index_path, ec)) {
    auto single = dir / "model.safetensors";
    if (!std::filesystem::exists(single, ec)) {
      return common::make_error(dir.string() + ": has neither model.safetensors nor model.safetensors.index.json");
    }
    auto f = SafetensorsFile::open(single);
    if (!f) return f.error();
    files.push_back(std::move(*f));
    return files;
  }
  auto text = common::read_file(index_path);
  if (!text) return text.error();
  json index = json::parse(*text, nullptr, false);
  if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    return common::make_error(index_path.string() + ": not JSON with a \"weight_map\" object");
  }
  std::map<std::string, std::string> weight_map;
  std::set<std::string> shards;
  for (const auto& [name, shard] : index["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().empty() || shard.get<std::string>().find('/') != std::string::npos) {
      return common::make_error(index_path.string() + ": weight_map entry '" + name + "' is not a shard file name");
    }
    weight_map[name] = shard.get<std::string>();
    shards.insert(shard.get<std::string>());
  }
  std::map<std::string, std::size_t> shard_index;
  for (const auto& shard : shards) {
    auto f = SafetensorsFile::open(dir / shard);
    if (!f) return common::make_error(f.error().message + " (a shard named by " + index_path.string() + ")");
    shard_index[shard] = files.size();
    files.push_back(std::move(*f));
  }
  for (const auto& [name, shard] : weight_map) {
    if (files[shard_index[shard]].find(name) == nullptr) {
      return common::make_error(index_path.string() + ": weight_map puts '" + name + "' in " + shard +
                                ", which does not hold it");
    }
  }
  return files;
}

}  // namespace kernelrl::weights
