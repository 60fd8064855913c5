// The policy model: a Llama/Qwen2 decoder-only transformer in libtorch whose named_parameters()
// are Hugging Face's names (model.embed_tokens.weight, model.layers.0.self_attn.q_proj.weight, ...,
// model.norm.weight, lm_head.weight), so a checkpoint's tensor map loads 1:1 and state() saves
// back. Runs on CPU (float32/float64) and CUDA (bfloat16, or float32 under autocast). Not
// thread-safe: one thread drives a model at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "common/expected.hpp"
#include "model/layers.hpp"
#include "model/linear_logprobs.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::model {

class KvCache;

// The "model." prefix of Hugging Face's names: embedding, layers, final norm.
class DecoderStackImpl : public torch::nn::Module {
 public:
  explicit DecoderStackImpl(const weights::ModelConfig& config);
  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  RmsNorm norm{nullptr};
  std::vector<DecoderLayer> layer_list;  // the same layers, typed
};
TORCH_MODULE(DecoderStack);

struct TokenLogprobs {
  torch::Tensor logprobs;  // [B, T] float32: log p(target_t | tokens <= t); 0 where mask is 0
  torch::Tensor entropy;   // [B, T] float32 entropy (nats) at those positions; undefined unless requested
};

struct TokenLogprobsOptions {
  std::int64_t chunk_rows = 2048;  // positions whose [chunk, vocab] float32 logits exist at once
  bool with_entropy = false;       // also compute the entropy of the next-token distribution
  double temperature = 1.0;        // log-probs under softmax(logits / temperature)
};

class TransformerImpl : public torch::nn::Module {
 public:
  // Builds the model with transformers' initialisation (normal(0, 0.02) matrices, unit norms) from
  // the global torch RNG. `config` must pass check_config (make_transformer checks it).
  explicit TransformerImpl(const weights::ModelConfig& config);

  const weights::ModelConfig& config() const { return config_; }

  // Logits [B, T, vocab] in the activation dtype for input_ids [B, T] int64.
  // positions: [B, T] or [T] int64 (undefined: cache length + 0..T-1). cache: append these tokens'
  // keys/values and attend over everything cached. attention_mask: [B, T_total] (T_total = cached
  // + T, or T) with 1 for real tokens and 0 for left padding; undefined means no padding.
  // Shape misuse throws c10::Error (a programmer error).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& positions = {},
                        KvCache* cache = nullptr, const torch::Tensor& attention_mask = {});

  // Logits [B, vocab] of the last position only (decoding).
  torch::Tensor forward_last(const torch::Tensor& input_ids, const torch::Tensor& positions = {},
                             KvCache* cache = nullptr, const torch::Tensor& attention_mask = {});

  // forward_last for one token per row [B, 1] as a slot step of `cache` (KvCache::begin_at): the
  // same shapes at every step, so the step can be captured in a CUDA graph and replayed.
  torch::Tensor forward_last_at(const torch::Tensor& input_ids, const torch::Tensor& positions, KvCache& cache,
                                const torch::Tensor& slot);

  // Hidden states after the final norm, [B, T, hidden]: what the output projection reads.
  torch::Tensor hidden_states(const torch::Tensor& input_ids, const torch::Tensor& positions = {},
                              KvCache* cache = nullptr, const torch::Tensor& attention_mask = {});

  // log p(targets[b, t] | input_ids[b, <= t]) for every position where mask [B, T] is nonzero
  // (undefined mask: all), without materialising [B, T, vocab] float32 logits; differentiable.
  // Only the masked positions go through the output projection. positions / attention_mask as in
  // forward (undefined: 0..T-1, no padding). One host sync (counting the masked positions).
  TokenLogprobs token_logprobs(const torch::Tensor& input_ids, const torch::Tensor& targets,
                               const torch::Tensor& mask = {}, const TokenLogprobsOptions& options = {},
                               const torch::Tensor& positions = {}, const torch::Tensor& attention_mask = {});

  // The output projection's weight [vocab, hidden]: lm_head's, or the embedding when tied.
  torch::Tensor output_weight() const;

  // Copies `tensors` (Hugging Face names) into the parameters, converting dtype and device. All or
  // nothing: a missing, unexpected or mis-shaped tensor is an error naming it, and nothing changes.
  // Tolerated extras: rotary inv_freq buffers, and lm_head.weight of a tied model.
  common::Fallible load_weights(const std::map<std::string, torch::Tensor>& tensors);

  // The parameters by Hugging Face name (detached, sharing memory); a tied model has no lm_head.weight.
  std::map<std::string, torch::Tensor> state() const;

  // Recompute each layer in backward instead of keeping its activations (training only; ignored
  // with a cache or without grad).
  void set_activation_checkpointing(bool enabled) { checkpointing_ = enabled; }
  bool activation_checkpointing() const { return checkpointing_; }

  // Decoding speed: one GEMM for q/k/v and one for gate/up in every layer, from a snapshot of the
  // weights, used only while grad mode is off. Call again after the parameters change (generate()
  // turns it on for its duration and off at the end); false frees the copies.
  void set_fused_projections(bool fused);

  // Re-draws the parameters: matrices and embedding normal(0, std), biases 0, norm weights 1.
  void reset_parameters(double std = 0.02);

  DecoderStack model{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when tie_word_embeddings

 private:
  weights::ModelConfig config_;
  bool checkpointing_ = false;
};
TORCH_MODULE(Transformer);

// A model for `config`, or an error naming the config field at fault (or torch's allocation error).
common::Expected<Transformer> make_transformer(const weights::ModelConfig& config);

}  // namespace kernelrl::model
