// A model checkpoint as torch tensors under Hugging Face's names, loaded from a GGUF file
// (dequantised; Llama's Q/K rows put back in HF order) or from a Hugging Face folder (config.json +
// model.safetensors or its shards), and saved as a Hugging Face folder that transformers'
// AutoModelForCausalLM.from_pretrained loads as the same model. See docs/checkpoints.md.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include "common/expected.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::weights {

struct Checkpoint {
  ModelConfig config;
  // Hugging Face names: model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.weight
  // (+ q/k/v .bias for qwen2), model.layers.{i}.mlp.{gate,up,down}_proj.weight,
  // model.layers.{i}.input_layernorm.weight, model.layers.{i}.post_attention_layernorm.weight,
  // model.norm.weight, lm_head.weight (absent when tied). CPU, contiguous, the dtype asked for.
  // (at::Tensor is torch::Tensor; at::ScalarType is torch::Dtype.)
  std::map<std::string, at::Tensor> tensors;
  std::filesystem::path source;  // the file or folder it was read from
  std::string format;            // "gguf" or "safetensors"
};

// Reads `path`: a .gguf file, or a Hugging Face folder. Every tensor the config implies must be
// present with its shape; unknown tensors are errors. Values are decoded to float32, then cast to
// `dtype`. Errors name the file and the tensor or field (torch errors included, never thrown).
common::Expected<Checkpoint> load_checkpoint(const std::filesystem::path& path,
                                             at::ScalarType dtype = at::kFloat);

// Writes `dir` as a Hugging Face checkpoint: config.json, generation_config.json (bos/eos) and
// model.safetensors in `torch_dtype` ("float32", "bfloat16" or "float16"). `tensors` must be exactly
// the set the config implies (lm_head.weight absent when tied), on any device. Built in `dir`.tmp
// and swapped in by rename: on failure an existing `dir` is left as it was.
common::Fallible save_hf_checkpoint(const std::filesystem::path& dir, const ModelConfig& config,
                                    const std::map<std::string, at::Tensor>& tensors,
                                    const std::string& torch_dtype);

}  // namespace kernelrl::weights
