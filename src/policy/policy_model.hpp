// The policy as the trainer and the in-process sampler hold it: the transformer on its device,
// the tokenizer and the chat template, loaded from a GGUF file or a Hugging Face folder (plus,
// for a folder without a tokenizer of its own, the tokenizer of another model file).
#pragma once

#include <filesystem>
#include <string>

#include <torch/types.h>

#include "common/expected.hpp"
#include "model/transformer.hpp"
#include "tokenizer/chat_template.hpp"
#include "tokenizer/tokenizer.hpp"

namespace kernelrl::policy {

struct PolicyModel {
  model::Transformer model{nullptr};
  tokenizer::Tokenizer tokenizer;
  tokenizer::ChatTemplate chat;
  std::filesystem::path source;  // the checkpoint it stands for: the one it was loaded from, or (the trainer
                                 // sets it) the run's starting model when a later checkpoint was loaded
  torch::Device device{torch::kCPU};
  bool bf16_autocast = false;    // forward passes run under bfloat16 autocast (on CUDA)

  // The prompt ids the model sees for `messages` (chat template, generation prompt opened).
  std::vector<std::int64_t> prompt_ids(std::span<const tokenizer::ChatMessage> messages) const;
};

struct TokenizerAndChat {
  tokenizer::Tokenizer tokenizer;
  tokenizer::ChatTemplate chat;
};

// The tokenizer and chat template of `path`: a .gguf file (its tokenizer.* metadata), a
// tokenizer.json (with tokenizer_config.json / chat_template.jinja beside it), or a folder holding
// them. Errors name the file and what is missing or unsupported.
common::Expected<TokenizerAndChat> load_tokenizer(const std::filesystem::path& path);

// `model_path`: a .gguf file or a Hugging Face folder. `tokenizer_path`: where the tokenizer and
// chat template come from (a .gguf file, a tokenizer.json, or a folder holding tokenizer.json and
// tokenizer_config.json); empty = model_path. `device`: "cuda", "cpu" or "auto". On CUDA the
// weights stay float32 and forward passes use bfloat16 autocast. Errors name the file and field.
common::Expected<PolicyModel> load_policy_model(const std::filesystem::path& model_path,
                                                const std::filesystem::path& tokenizer_path, const std::string& device);

}  // namespace kernelrl::policy
