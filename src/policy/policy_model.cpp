#include "policy/policy_model.hpp"

#include <torch/torch.h>

#include "weights/checkpoint.hpp"
#include "weights/gguf.hpp"
#include "weights/gguf_tokenizer.hpp"

namespace kernelrl::policy {

namespace {

namespace fs = std::filesystem;
using common::make_error;

common::Expected<TokenizerAndChat> with_chat(tokenizer::Tokenizer tok, const fs::path& path) {
  if (tok.chat_template().empty()) {
    return make_error(path.string() + ": no chat template (tokenizer.chat_template, tokenizer_config.json or chat_template.jinja)");
  }
  auto chat = tokenizer::ChatTemplate::from_jinja(tok.chat_template());
  if (!chat) return make_error(path.string() + ": " + chat.error().message);
  return TokenizerAndChat{std::move(tok), std::move(*chat)};
}

common::Expected<tokenizer::Tokenizer> tokenizer_from_gguf(const fs::path& path) {
  auto file = weights::GgufFile::open(path);
  if (!file) return file.error();
  auto data = weights::read_gguf_tokenizer(*file);
  if (!data) return data.error();
  tokenizer::TokenizerSpec spec;
  spec.model = data->model;
  spec.tokens = std::move(data->tokens);
  spec.merges = std::move(data->merges);
  spec.token_types = std::move(data->token_types);
  spec.pre_tokenizer = data->pre;
  spec.bos_id = data->bos_id;
  spec.eos_id = data->eos_id;
  spec.pad_id = data->pad_id;
  spec.add_bos = data->add_bos;
  spec.chat_template = data->chat_template;
  auto tok = tokenizer::Tokenizer::from_spec(std::move(spec));
  if (!tok) return make_error(path.string() + ": " + tok.error().message);
  return tok;
}

common::Expected<torch::Device> pick_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name == "cuda" || name == "auto") {
    if (torch::cuda::is_available()) return torch::Device(torch::kCUDA, 0);
    if (name == "auto") return torch::Device(torch::kCPU);
    return make_error("device 'cuda' asked for, but torch sees no usable GPU");
  }
  return make_error("unknown device '" + name + "': expected cuda, cpu or auto");
}

}  // namespace

common::Expected<TokenizerAndChat> load_tokenizer(const fs::path& path) {
  auto tok = path.extension() == ".gguf"
                 ? tokenizer_from_gguf(path)
                 : tokenizer::Tokenizer::from_tokenizer_json(fs::is_directory(path) ? path / "tokenizer.json" : path);
  if (!tok) return tok.error();
  return with_chat(std::move(*tok), path);
}

std::vector<std::int64_t> PolicyModel::prompt_ids(std::span<const tokenizer::ChatMessage> messages) const {
  const auto ids = tokenizer.encode(chat.render(messages, /*add_generation_prompt=*/true), /*allow_special=*/true);
  return {ids.begin(), ids.end()};
}

common::Expected<PolicyModel> load_policy_model(const fs::path& model_path, const fs::path& tokenizer_path,
                                                const std::string& device_name) {
  auto device = pick_device(device_name);
  if (!device) return device.error();
  const fs::path tok_path = tokenizer_path.empty() ? model_path : tokenizer_path;
  auto tok = load_tokenizer(tok_path);
  if (!tok) return tok.error();

  auto checkpoint = weights::load_checkpoint(model_path, torch::kFloat);
  if (!checkpoint) return checkpoint.error();
  if (checkpoint->config.vocab_size < tok->tokenizer.vocab_size()) {
    return make_error(tok_path.string() + ": the tokenizer has " + std::to_string(tok->tokenizer.vocab_size()) +
                      " tokens but the model " + model_path.string() + " only " +
                      std::to_string(checkpoint->config.vocab_size));
  }
  auto transformer = model::make_transformer(checkpoint->config);
  if (!transformer) return transformer.error();
  if (auto s = (*transformer)->load_weights(checkpoint->tensors); !s) {
    return make_error(model_path.string() + ": " + s.error().message);
  }
  try {
    (*transformer)->to(*device);
  } catch (const c10::Error& e) {
    return make_error("cannot move the model to " + device->str() + ": " + e.what_without_backtrace());
  }
  PolicyModel p{std::move(*transformer), std::move(tok->tokenizer), std::move(tok->chat), model_path, *device,
                device->is_cuda()};
  return p;
}

}  // namespace kernelrl::policy
