// Helpers for the weights tests: fixture paths, temporary folders, byte patching, and a tiny GGUF
// writer for hand-made files (missing keys, wrong types) that the fixture script does not make.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/fs.hpp"

namespace kernelrl::weights::testing {

inline std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(KERNELRL_SOURCE_DIR) / "tests" / "data" / "weights" / name;
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
void put(std::string& bytes, std::size_t at, T v) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

template <class T>
T get(const std::string& bytes, std::size_t at) {
  T v{};
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

// A fresh folder under the system temp dir, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir() {
    auto dir = common::make_temp_dir(std::filesystem::temp_directory_path(), "kernelrl_weights_test_");
    if (dir) path_ = *dir;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Builds GGUF v3 bytes: metadata first, then tensors (F32 only), alignment 32.
class GgufBuilder {
 public:
  GgufBuilder& u32(const std::string& key, std::uint32_t v) { return kv(key, 4, &v, 4); }
  GgufBuilder& f32(const std::string& key, float v) { return kv(key, 6, &v, 4); }
  GgufBuilder& str(const std::string& key, const std::string& v) {
    std::string value = len(v.size()) + v;
    return kv(key, 8, value.data(), value.size());
  }
  GgufBuilder& strings(const std::string& key, const std::vector<std::string>& items) {
    std::string value;
    std::uint32_t type = 8;
    value.append(reinterpret_cast<const char*>(&type), 4);
    value += len(items.size());
    for (const auto& s : items) value += len(s.size()) + s;
    return kv(key, 9, value.data(), value.size());
  }
  // An F32 tensor of row-major `shape` filled with `fill`.
  GgufBuilder& tensor(const std::string& name, std::vector<std::int64_t> shape, float fill = 0.5f) {
    tensors_.push_back({name, std::move(shape), fill});
    return *this;
  }
  std::string build() const {
    std::string out = "GGUF";
    append<std::uint32_t>(out, 3);
    append<std::uint64_t>(out, tensors_.size());
    append<std::uint64_t>(out, n_kv_);
    out += kv_;
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> sizes;
    for (const auto& t : tensors_) {
      out += len(t.name.size()) + t.name;
      append<std::uint32_t>(out, static_cast<std::uint32_t>(t.shape.size()));
      std::uint64_t n = 1;
      for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) {
        append<std::uint64_t>(out, static_cast<std::uint64_t>(*it));
        n *= static_cast<std::uint64_t>(*it);
      }
      append<std::uint32_t>(out, 0);  // F32
      append<std::uint64_t>(out, offset);
      sizes.push_back(n);
      offset += (n * 4 + 31) / 32 * 32;
    }
    out.append((32 - out.size() % 32) % 32, '\0');
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      for (std::uint64_t j = 0; j < sizes[i]; ++j) append<float>(out, tensors_[i].fill);
      out.append((32 - out.size() % 32) % 32, '\0');
    }
    return out;
  }

 private:
  struct Tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    float fill;
  };
  template <class T>
  static void append(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  static std::string len(std::uint64_t n) { return std::string(reinterpret_cast<const char*>(&n), 8); }
  GgufBuilder& kv(const std::string& key, std::uint32_t type, const void* value, std::size_t n) {
    kv_ += len(key.size()) + key;
    append<std::uint32_t>(kv_, type);
    kv_.append(static_cast<const char*>(value), n);
    ++n_kv_;
    return *this;
  }

  std::string kv_;
  std::uint64_t n_kv_ = 0;
  std::vector<Tensor> tensors_;
};

// A minimal valid llama GGUF: 1 layer, vocab 8, hidden 8, 2 heads; `skip_key` leaves one key out.
inline GgufBuilder tiny_llama_builder(const std::string& skip_key = "") {
  GgufBuilder b;
  b.str("general.architecture", "llama");
  auto u32 = [&](const std::string& k, std::uint32_t v) {
    if (k != skip_key) b.u32(k, v);
  };
  u32("llama.block_count", 1);
  u32("llama.context_length", 64);
  u32("llama.embedding_length", 8);
  u32("llama.feed_forward_length", 16);
  u32("llama.attention.head_count", 2);
  u32("llama.attention.head_count_kv", 2);
  if (skip_key != "llama.attention.layer_norm_rms_epsilon") b.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  b.tensor("token_embd.weight", {8, 8}).tensor("output_norm.weight", {8});
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output"}) b.tensor(std::string("blk.0.") + n + ".weight", {8, 8});
  b.tensor("blk.0.ffn_gate.weight", {16, 8}).tensor("blk.0.ffn_up.weight", {16, 8}).tensor("blk.0.ffn_down.weight", {8, 16});
  b.tensor("blk.0.attn_norm.weight", {8}).tensor("blk.0.ffn_norm.weight", {8});
  return b;
}

}  // namespace kernelrl::weights::testing
