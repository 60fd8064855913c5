// The decoder stack, its forward variants, Hugging Face-named weight loading and saving.
#include "model/transformer.hpp"

#include <string>

#include "model/autocast.hpp"
#include "model/config_check.hpp"
#include "model/kv_cache.hpp"

namespace kernelrl::model {
namespace {

std::string shape_string(at::IntArrayRef sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// "a, b, c" of at most 8 names, then "(+N more)".
std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 8) out += " (+" + std::to_string(names.size() - 8) + " more)";
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Which keys each query sees. `cache` (when given) has already recorded this step's slots.
AttentionMask build_mask(std::int64_t b, std::int64_t t, const KvCache* cache, const torch::Tensor& attention_mask,
                         torch::Device device) {
  const auto bools = torch::TensorOptions().dtype(torch::kBool).device(device);
  if (cache == nullptr) {
    if (!attention_mask.defined()) return {MaskKind::CAUSAL, {}};
    TORCH_CHECK(attention_mask.dim() == 2 && attention_mask.size(0) == b && attention_mask.size(1) == t,
                "Transformer: attention_mask must be [", b, ", ", t, "], got ", attention_mask.sizes());
    auto valid = attention_mask.to(device, torch::kBool).view({b, 1, 1, t});
    // A padding query sees only itself, so no softmax row is empty (no NaN reaches the gradients).
    return {MaskKind::EXPLICIT, torch::ones({t, t}, bools).tril() & (valid | torch::eye(t, bools))};
  }
  if (cache->in_slot_step()) {
    return {MaskKind::EXPLICIT, cache->key_mask().view({b, 1, 1, cache->capacity()}), cache->slot()};
  }
  const auto past = cache->length(), total = past + t;
  if (!cache->has_padding()) {
    if (past == 0) return {MaskKind::CAUSAL, {}};
    if (t == 1) return {MaskKind::NONE, {}};
    return {MaskKind::EXPLICIT, torch::ones({t, total}, bools).tril(past).view({1, 1, t, total})};
  }
  auto valid = cache->key_mask().view({b, 1, 1, total});
  if (t == 1 && !attention_mask.defined()) return {MaskKind::EXPLICIT, valid};  // the new slot is real
  auto causal = torch::ones({t, total}, bools).tril(past);
  auto self = causal & torch::ones({t, total}, bools).triu(past);
  return {MaskKind::EXPLICIT, causal & (valid | self)};
}

}  // namespace

DecoderStackImpl::DecoderStackImpl(const weights::ModelConfig& config) {
  embed_tokens = register_module(
      "embed_tokens", torch::nn::Embedding(torch::nn::EmbeddingOptions(config.vocab_size, config.hidden_size)));
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.n_layers; ++i) {
    DecoderLayer layer(config);
    layers->push_back(layer);
    layer_list.push_back(layer);
  }
  norm = register_module("norm", RmsNorm(config.hidden_size, config.rms_norm_eps));
}

TransformerImpl::TransformerImpl(const weights::ModelConfig& config) : config_(config) {
  model = register_module("model", DecoderStack(config));
  if (!config.tie_word_embeddings) {
    lm_head = register_module(
        "lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.hidden_size, config.vocab_size).bias(false)));
  }
  reset_parameters();
}

void TransformerImpl::reset_parameters(double std) {
  torch::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    if (ends_with(item.key(), "norm.weight")) {
      item.value().fill_(1.0);
    } else if (ends_with(item.key(), ".bias")) {
      item.value().zero_();
    } else {
      item.value().normal_(0.0, std);
    }
  }
}

void TransformerImpl::set_fused_projections(bool fused) {
  for (auto& layer : model->layer_list) {
    layer->self_attn->set_fused(fused);
    layer->mlp->set_fused(fused);
  }
}

torch::Tensor TransformerImpl::output_weight() const {
  return config_.tie_word_embeddings ? model->embed_tokens->weight : lm_head->weight;
}

torch::Tensor TransformerImpl::hidden_states(const torch::Tensor& input_ids, const torch::Tensor& positions,
                                             KvCache* cache, const torch::Tensor& attention_mask) {
  TORCH_CHECK(input_ids.dim() == 2 && input_ids.scalar_type() == torch::kInt64,
              "Transformer: input_ids must be int64 [B, T], got ", input_ids.scalar_type(), " ", input_ids.sizes());
  const auto b = input_ids.size(0), t = input_ids.size(1);
  const auto device = input_ids.device();
  const auto past = cache != nullptr ? cache->length() : 0;
  auto pos = positions.defined() ? positions.to(device) : torch::arange(past, past + t, input_ids.options());
  TORCH_CHECK((pos.dim() == 1 && pos.size(0) == t) || (pos.dim() == 2 && pos.size(0) == b && pos.size(1) == t),
              "Transformer: positions must be [T] or [B, T] with B=", b, " T=", t, ", got ", pos.sizes());
  if (cache != nullptr) {
    TORCH_CHECK(cache->batch() == b, "Transformer: cache batch ", cache->batch(), " but input batch ", b);
    if (cache->in_slot_step()) {
      TORCH_CHECK(t == 1 && !attention_mask.defined(), "Transformer: a slot step takes one token per row and no mask");
    } else {
      cache->begin(t, attention_mask);
    }
  }
  torch::Tensor x;
  try {
    const auto mask = build_mask(b, t, cache, attention_mask, device);
    auto& embed = model->embed_tokens;
    const auto activation_dtype =
        autocast_enabled(device.type()) ? autocast_dtype(device.type()) : embed->weight.scalar_type();
    const auto rope = make_rope(pos, config_.head_dim, config_.rope_theta, activation_dtype);
    x = embed->forward(input_ids);
    const bool recompute = checkpointing_ && cache == nullptr && torch::GradMode::is_enabled();
    for (std::size_t i = 0; i < model->layer_list.size(); ++i) {
      auto& layer = model->layer_list[i];
      x = recompute ? checkpointed_layer(*layer, x, rope, mask)
                    : layer->forward(x, rope, mask, cache, static_cast<std::int64_t>(i));
    }
  } catch (...) {
    if (cache != nullptr) cache->rollback();  // the cache stays usable after a failed forward
    throw;
  }
  if (cache != nullptr) cache->commit();
  return model->norm(x);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& positions,
                                       KvCache* cache, const torch::Tensor& attention_mask) {
  return at::linear(hidden_states(input_ids, positions, cache, attention_mask), output_weight());
}

torch::Tensor TransformerImpl::forward_last(const torch::Tensor& input_ids, const torch::Tensor& positions,
                                            KvCache* cache, const torch::Tensor& attention_mask) {
  auto h = hidden_states(input_ids, positions, cache, attention_mask);
  return at::linear(h.select(1, h.size(1) - 1), output_weight());
}

torch::Tensor TransformerImpl::forward_last_at(const torch::Tensor& input_ids, const torch::Tensor& positions,
                                               KvCache& cache, const torch::Tensor& slot) {
  cache.begin_at(slot);
  try {
    return forward_last(input_ids, positions, &cache);
  } catch (...) {
    cache.rollback();  // a check that failed before the forward started leaves no slot step behind
    throw;
  }
}

TokenLogprobs TransformerImpl::token_logprobs(const torch::Tensor& input_ids, const torch::Tensor& targets,
                                              const torch::Tensor& mask, const TokenLogprobsOptions& options,
                                              const torch::Tensor& positions, const torch::Tensor& attention_mask) {
  TORCH_CHECK(targets.sizes() == input_ids.sizes(), "token_logprobs: targets ", targets.sizes(),
              " must match input_ids ", input_ids.sizes());
  TORCH_CHECK(!mask.defined() || mask.sizes() == input_ids.sizes(), "token_logprobs: mask ", mask.sizes(),
              " must match input_ids ", input_ids.sizes());
  const auto b = input_ids.size(0), t = input_ids.size(1);
  auto h = hidden_states(input_ids, positions, nullptr, attention_mask).reshape({b * t, -1});
  auto target = targets.reshape({b * t}).to(h.device(), torch::kInt64);
  torch::Tensor rows;  // selected flat positions; undefined: all
  if (mask.defined()) {
    rows = mask.reshape({b * t}).to(h.device()).to(torch::kBool).nonzero().squeeze(1);
    h = h.index_select(0, rows);
    target = target.index_select(0, rows);
  }
  auto [logprobs, entropy] =
      linear_logprobs(h, output_weight(), target, {options.chunk_rows, options.with_entropy, options.temperature});
  auto to_grid = [&](const torch::Tensor& values) {
    if (!values.defined()) return values;
    if (!rows.defined()) return values.view({b, t});
    return torch::zeros({b * t}, values.options()).index_copy(0, rows, values).view({b, t});
  };
  return {to_grid(logprobs), to_grid(entropy)};
}

common::Fallible TransformerImpl::load_weights(const std::map<std::string, torch::Tensor>& tensors) {
  try {
    const auto params = named_parameters();
    std::vector<std::string> missing, unexpected, mis_shaped;
    for (const auto& item : params) {
      auto found = tensors.find(item.key());
      if (found == tensors.end()) {
        missing.push_back(item.key());
      } else if (found->second.sizes() != item.value().sizes()) {
        mis_shaped.push_back(item.key() + " (checkpoint " + shape_string(found->second.sizes()) + ", model " +
                             shape_string(item.value().sizes()) + ")");
      }
    }
    for (const auto& [name, tensor] : tensors) {
      if (params.contains(name) || ends_with(name, "rotary_emb.inv_freq")) continue;
      if (name == "lm_head.weight" && config_.tie_word_embeddings) {
        const auto expected = model->embed_tokens->weight.sizes();
        if (tensor.sizes() != expected) {
          mis_shaped.push_back(name + " (checkpoint " + shape_string(tensor.sizes()) + ", model " +
                               shape_string(expected) + ")");
        }
        continue;  // tied: the embedding is the output projection
      }
      unexpected.push_back(name);
    }
    if (!missing.empty() || !unexpected.empty() || !mis_shaped.empty()) {
      std::string message = "load_weights:";
      if (!missing.empty()) message += " missing tensors: " + name_list(missing) + ";";
      if (!unexpected.empty()) message += " unexpected tensors: " + name_list(unexpected) + ";";
      if (!mis_shaped.empty()) message += " wrong shapes: " + name_list(mis_shaped) + ";";
      message.pop_back();
      return common::Error{message};
    }
    torch::NoGradGuard no_grad;
    for (const auto& item : params) item.value().copy_(tensors.at(item.key()));
    return common::Ok{};
  } catch (const c10::Error& e) {
    return common::Error{std::string("load_weights: ") + e.what_without_backtrace()};
  }
}

std::map<std::string, torch::Tensor> TransformerImpl::state() const {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : named_parameters()) out.emplace(item.key(), item.value().detach());
  return out;
}

common::Expected<Transformer> make_transformer(const weights::ModelConfig& config) {
  if (auto ok = check_config(config); !ok) return ok.error();
  try {
    return Transformer(config);
  } catch (const c10::Error& e) {
    return common::Error{std::string("make_transformer: ") + e.what_without_backtrace()};
  }
}

}  // namespace kernelrl::model
