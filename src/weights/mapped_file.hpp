// A whole file mapped read-only into memory (mmap), shared by the GGUF and safetensors readers so
// that tensor bytes are read in place, never copied at open. Little-endian hosts only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "common/expected.hpp"

namespace kernelrl::weights {

class MappedFile {
 public:
  // Maps `path` read-only; an error names the file (missing, a directory, unreadable). An empty
  // file maps to an empty span. The mapping lives as long as the last shared_ptr to it.
  static common::Expected<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kernelrl::weights
