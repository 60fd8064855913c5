// load_checkpoint: GGUF (dequantise, un-permute Llama's Q/K, cast) and Hugging Face safetensors
// folders (copy out of the map, cast), both checked against hf_tensor_shapes(config).
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <cstring>

#include "weights/checkpoint.hpp"
#include "weights/dequantize.hpp"
#include "weights/gguf.hpp"
#include "weights/gguf_config.hpp"
#include "weights/safetensors.hpp"
#include "weights/tensor_names.hpp"

namespace kernelrl::weights {

namespace {

using Shapes = std::map<std::string, std::vector<std::int64_t>>;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The expected shape of `hf_name`, or an error naming it (unknown, or shaped otherwise).
common::Fallible check_shape(const Shapes& expected, const std::string& hf_name, const std::vector<std::int64_t>& shape) {
  auto it = expected.find(hf_name);
  if (it == expected.end()) {
    return common::make_error("tensor '" + hf_name + "' is not part of a checkpoint of this config");
  }
  if (it->second != shape) {
    return common::make_error("tensor '" + hf_name + "' has shape " + shape_text(shape) + ", the config implies " +
                              shape_text(it->second));
  }
  return common::Ok{};
}

common::Fallible check_complete(const Shapes& expected, const std::map<std::string, at::Tensor>& tensors) {
  for (const auto& [name, shape] : expected) {
    if (tensors.count(name) == 0) {
      auto gguf = hf_to_gguf_name(name);
      return common::make_error("tensor '" + name + "'" + (gguf ? " (GGUF: " + *gguf + ")" : "") + " is missing");
    }
  }
  return common::Ok{};
}

// One GGUF tensor as a float32 tensor in HF layout.
common::Expected<at::Tensor> read_gguf_tensor(const GgufFile& file, const GgufTensorInfo& info, const std::string& hf_name,
                                              const ModelConfig& config) {
  at::Tensor out = at::empty(info.shape, at::kFloat);
  std::span<float> values(out.data_ptr<float>(), static_cast<std::size_t>(info.n_elements));
  if (auto ok = dequantize(info.type, file.tensor_data(info), values); !ok) {
    return common::make_error("tensor '" + info.name + "': " + ok.error().message);
  }
  // llama.cpp's converter permutes Llama's Q and K rows (HF rotate-half -> interleaved); Qwen2's are not.
  if (config.architecture == "llama") {
    bool q = hf_name.ends_with("self_attn.q_proj.weight"), k = hf_name.ends_with("self_attn.k_proj.weight");
    if (q || k) unpermute_rows(values, info.shape[0], info.shape[1], q ? config.n_heads : config.n_kv_heads);
  }
  return out;
}

common::Expected<Checkpoint> load_gguf(const std::filesystem::path& path, at::ScalarType dtype) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  auto config = config_from_gguf(*file);
  if (!config) return config.error();
  Checkpoint ck{*config, {}, path, "gguf"};
  Shapes expected = hf_tensor_shapes(*config);
  for (const auto& info : file->tensors()) {
    auto hf_name = gguf_to_hf_name(info.name);
    if (!hf_name) return common::make_error(path.string() + ": " + hf_name.error().message);
    if (auto ok = check_shape(expected, *hf_name, info.shape); !ok) {
      return common::make_error(path.string() + ": " + ok.error().message + " (GGUF: " + info.name + ")");
    }
    auto t = read_gguf_tensor(*file, info, *hf_name, *config);
    if (!t) return common::make_error(path.string() + ": " + t.error().message);
    ck.tensors[*hf_name] = dtype == at::kFloat ? *t : t->to(dtype);
  }
  if (auto ok = check_complete(expected, ck.tensors); !ok) return common::make_error(path.string() + ": " + ok.error().message);
  return ck;
}

common::Expected<at::ScalarType> torch_dtype_of(const TensorView& t) {
  switch (t.dtype) {
    case SafetensorsDtype::F32: return at::kFloat;
    case SafetensorsDtype::F16: return at::kHalf;
    case SafetensorsDtype::BF16: return at::kBFloat16;
    case SafetensorsDtype::F64: return at::kDouble;
    default:
      return common::make_error("tensor '" + t.name + "' is " + safetensors_dtype_name(t.dtype) +
                                "; weights must be F32, F16, BF16 or F64");
  }
}

// Tensors a HF folder may hold that are not weights of the model (recomputed buffers).
bool ignorable(const std::string& name, const ModelConfig& config) {
  return name.ends_with("rotary_emb.inv_freq") || (config.tie_word_embeddings && name == "lm_head.weight");
}

common::Expected<Checkpoint> load_hf(const std::filesystem::path& dir, at::ScalarType dtype) {
  auto config = read_hf_config(dir / "config.json");
  if (!config) return config.error();
  auto files = open_hf_safetensors(dir);
  if (!files) return files.error();
  Checkpoint ck{*config, {}, dir, "safetensors"};
  Shapes expected = hf_tensor_shapes(*config);
  for (const auto& file : *files) {
    auto fail = [&](const std::string& what) { return common::make_error(file.path().string() + ": " + what); };
    for (const auto& view : file.tensors()) {
      if (ignorable(view.name, *config)) continue;
      if (auto ok = check_shape(expected, view.name, view.shape); !ok) return fail(ok.error().message);
      if (ck.tensors.count(view.name) != 0) return fail("tensor '" + view.name + "' is also in another shard");
      auto source_dtype = torch_dtype_of(view);
      if (!source_dtype) return fail(source_dtype.error().message);
      at::Tensor t = at::empty(view.shape, *source_dtype);
      if (!view.data.empty()) std::memcpy(t.data_ptr(), view.data.data(), view.data.size());
      ck.tensors[view.name] = *source_dtype == dtype ? t : t.to(dtype);
    }
  }
  if (auto ok = check_complete(expected, ck.tensors); !ok) return common::make_error(dir.string() + ": " + ok.error().message);
  return ck;
}

}  // namespace

common::Expected<Checkpoint> load_checkpoint(const std::filesystem::path& path, at::ScalarType dtype) {
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return load_hf(path, dtype);
    if (!std::filesystem::exists(path, ec)) return common::make_error(path.string() + ": no such file or folder");
    return load_gguf(path, dtype);
  } catch (const c10::Error& e) {
    return common::make_error(path.string() + ": torch: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    return common::make_error(path.string() + ": " + e.what());
  }
}

}  // namespace kernelrl::weights
