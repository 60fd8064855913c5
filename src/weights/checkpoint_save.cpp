// save_hf_checkpoint: checks the tensors against the config, converts them to the requested dtype
// on the CPU, writes config.json, generation_config.json and model.safetensors into `dir`.tmp, then
// swaps that folder in (the previous `dir`, if any, is moved aside first and removed last).
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include "common/fs.hpp"
#include "weights/checkpoint.hpp"
#include "weights/safetensors.hpp"
#include "weights/tensor_names.hpp"

namespace kernelrl::weights {

namespace fs = std::filesystem;

namespace {

struct DtypeChoice {
  at::ScalarType torch;
  SafetensorsDtype file;
};

common::Expected<DtypeChoice> choose_dtype(const std::string& torch_dtype) {
  if (torch_dtype == "float32") return DtypeChoice{at::kFloat, SafetensorsDtype::F32};
  if (torch_dtype == "bfloat16") return DtypeChoice{at::kBFloat16, SafetensorsDtype::BF16};
  if (torch_dtype == "float16") return DtypeChoice{at::kHalf, SafetensorsDtype::F16};
  return common::make_error("torch_dtype \"" + torch_dtype + "\" is not float32, bfloat16 or float16");
}

common::Fallible check_tensor_set(const ModelConfig& config, const std::map<std::string, at::Tensor>& tensors) {
  auto expected = hf_tensor_shapes(config);
  for (const auto& [name, t] : tensors) {
    auto it = expected.find(name);
    if (it == expected.end()) {
      return common::make_error("tensor '" + name + "' is not part of a checkpoint of this config" +
                                (name == "lm_head.weight" ? " (tie_word_embeddings is true)" : ""));
    }
    if (!t.defined() || t.sizes().vec() != it->second) {
      return common::make_error("tensor '" + name + "' is undefined or not shaped as the config implies");
    }
  }
  for (const auto& [name, shape] : expected) {
    if (tensors.count(name) == 0) return common::make_error("tensor '" + name + "' is missing");
  }
  return common::Ok{};
}

common::Fallible write_folder(const fs::path& tmp, const ModelConfig& config,
                              const std::map<std::string, at::Tensor>& tensors, const std::string& torch_dtype,
                              const DtypeChoice& dtype) {
  std::vector<at::Tensor> converted;  // keeps the bytes the views point at alive
  std::vector<TensorView> views;
  converted.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    converted.push_back(t.detach().to(at::kCPU).to(dtype.torch).contiguous());
    const at::Tensor& c = converted.back();
    views.push_back({name, dtype.file, c.sizes().vec(),
                     {static_cast<const std::byte*>(c.data_ptr()), static_cast<std::size_t>(c.nbytes())}});
  }
  nlohmann::json generation = {{"_from_model_config", true}};
  if (config.bos_token_id >= 0) generation["bos_token_id"] = config.bos_token_id;
  if (config.eos_token_id >= 0) generation["eos_token_id"] = config.eos_token_id;
  if (auto ok = common::write_file_atomic(tmp / "config.json", to_hf_config(config, torch_dtype).dump(2) + "\n"); !ok) return ok;
  if (auto ok = common::write_file_atomic(tmp / "generation_config.json", generation.dump(2) + "\n"); !ok) return ok;
  // transformers refuses safetensors files whose metadata lacks format "pt".
  return write_safetensors(tmp / "model.safetensors", views, {{"format", "pt"}});
}

// Moves `tmp` to `dir`; an existing `dir` goes to `dir`.old first and comes back if the move fails.
common::Fallible swap_in(const fs::path& tmp, const fs::path& dir) {
  std::error_code ec;
  fs::path old = dir;
  old += ".old";
  bool had_old = fs::exists(dir, ec);
  if (had_old) {
    (void)common::remove_tree(old);
    fs::rename(dir, old, ec);
    if (ec) return common::make_error(dir.string() + ": cannot move the previous checkpoint aside: " + ec.message());
  }
  fs::rename(tmp, dir, ec);
  if (ec) {
    std::string why = ec.message();
    if (had_old) fs::rename(old, dir, ec);
    return common::make_error(dir.string() + ": cannot move the new checkpoint into place: " + why);
  }
  if (had_old) (void)common::remove_tree(old);
  return common::Ok{};
}

}  // namespace

common::Fallible save_hf_checkpoint(const fs::path& dir, const ModelConfig& config,
                                    const std::map<std::string, at::Tensor>& tensors, const std::string& torch_dtype) {
  auto fail = [&](const std::string& what) { return common::make_error(dir.string() + ": " + what); };
  if (auto ok = config.validate(); !ok) return fail("config: " + ok.error().message);
  auto dtype = choose_dtype(torch_dtype);
  if (!dtype) return fail(dtype.error().message);
  if (auto ok = check_tensor_set(config, tensors); !ok) return fail(ok.error().message);
  fs::path tmp = dir;
  tmp += ".tmp";
  std::error_code ec;
  (void)common::remove_tree(tmp);  // a leftover of an interrupted save
  fs::create_directories(tmp, ec);
  if (ec) return common::make_error(tmp.string() + ": cannot create: " + ec.message());
  common::Fallible written = common::Ok{};
  try {
    written = write_folder(tmp, config, tensors, torch_dtype, *dtype);
  } catch (const c10::Error& e) {
    written = fail(std::string("torch: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    written = fail(e.what());
  }
  if (!written) {
    (void)common::remove_tree(tmp);
    return written;
  }
  return swap_in(tmp, dir);
}

}  // namespace kernelrl::weights
