// write_safetensors: the header JSON (keys sorted by name, as nlohmann orders objects), padded with
// spaces to a multiple of 8 bytes; the data laid out largest dtype first, then by name (the
// reference implementation's order, which keeps every tensor naturally aligned); written to
// `path`.tmp.<pid>, flushed to disk, renamed over `path`.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "weights/safetensors.hpp"

namespace kernelrl::weights {

namespace {

using nlohmann::json;

common::Fallible check_tensors(const std::vector<TensorView>& tensors) {
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") {
      return common::make_error("tensor name '" + t.name + "' cannot be written to safetensors");
    }
    if (!names.insert(t.name).second) return common::make_error("tensor '" + t.name + "' is given twice");
    std::uint64_t n = 1;
    for (auto d : t.shape) {
      if (d < 0) return common::make_error("tensor '" + t.name + "' has a negative dimension");
      n *= static_cast<std::uint64_t>(d);
    }
    if (n * safetensors_dtype_size(t.dtype) != t.data.size()) {
      return common::make_error("tensor '" + t.name + "': " + std::to_string(t.data.size()) + " bytes given but " +
                                safetensors_dtype_name(t.dtype) + " x shape needs " +
                                std::to_string(n * safetensors_dtype_size(t.dtype)));
    }
  }
  return common::Ok{};
}

// The header bytes (padded) for `tensors` in the order `order`.
common::Expected<std::string> make_header(const std::vector<TensorView>& tensors, const std::vector<std::size_t>& order,
                                          const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (std::size_t i : order) {
    const auto& t = tensors[i];
    header[t.name] = {{"dtype", safetensors_dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {  // invalid UTF-8 in a name or metadata
    return common::make_error(std::string("cannot encode the header: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

common::Fallible write_all(std::FILE* out, const void* data, std::size_t n, const std::filesystem::path& path) {
  if (n != 0 && std::fwrite(data, 1, n, out) != n) {
    return common::make_error(path.string() + ": write failed: " + std::strerror(errno));
  }
  return common::Ok{};
}

common::Fallible write_body(std::FILE* out, const std::filesystem::path& tmp, const std::string& header,
                            const std::vector<TensorView>& tensors, const std::vector<std::size_t>& order) {
  std::uint64_t n_header = header.size();
  if (auto w = write_all(out, &n_header, 8, tmp); !w) return w;
  if (auto w = write_all(out, header.data(), header.size(), tmp); !w) return w;
  for (std::size_t i : order) {
    if (auto w = write_all(out, tensors[i].data.data(), tensors[i].data.size(), tmp); !w) return w;
  }
  if (std::fflush(out) != 0 || ::fsync(::fileno(out)) != 0) {
    return common::make_error(tmp.string() + ": cannot flush to disk: " + std::strerror(errno));
  }
  return common::Ok{};
}

}  // namespace

common::Fallible write_safetensors(const std::filesystem::path& path, const std::vector<TensorView>& tensors,
                                   const std::map<std::string, std::string>& metadata) {
  if (auto ok = check_tensors(tensors); !ok) return common::make_error(path.string() + ": " + ok.error().message);
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    auto sa = safetensors_dtype_size(tensors[a].dtype), sb = safetensors_dtype_size(tensors[b].dtype);
    return sa != sb ? sa > sb : tensors[a].name < tensors[b].name;
  });
  auto header = make_header(tensors, order, metadata);
  if (!header) return common::make_error(path.string() + ": " + header.error().message);

  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  if (out == nullptr) return common::make_error(tmp.string() + ": cannot create: " + std::strerror(errno));
  auto written = write_body(out, tmp, *header, tensors, order);
  if (std::fclose(out) != 0 && written) {
    written = common::make_error(tmp.string() + ": cannot close: " + std::strerror(errno));
  }
  std::error_code ec;
  if (written) std::filesystem::rename(tmp, path, ec);
  if (!written || ec) {
    std::filesystem::remove(tmp, ec);
    if (!written) return written;
    return common::make_error(path.string() + ": cannot rename the finished file into place");
  }
  return common::Ok{};
}

}  // namespace kernelrl::weights
