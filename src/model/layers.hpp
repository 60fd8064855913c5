// Building blocks of the Llama/Qwen2 decoder, named as Hugging Face names them so that a
// checkpoint's tensors map 1:1 onto named_parameters(): RMSNorm, rotary embeddings (rotate-half
// convention), grouped-query attention, the SwiGLU MLP and one decoder layer.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "weights/model_config.hpp"

namespace kernelrl::model {

class KvCache;

// Rotary tables for a batch of positions, in the activation dtype, shaped [B or 1, T, 1, head_dim]
// so they broadcast over heads. sin_signed is sin with its first half negated, which turns
// rotate_half(x) * sin into roll(x, head_dim / 2) * sin_signed.
struct Rope {
  torch::Tensor cos;
  torch::Tensor sin_signed;
};

// Tables for `positions` ([T] or [B, T], int64), angles computed in float32 as transformers does.
Rope make_rope(const torch::Tensor& positions, std::int64_t head_dim, double theta, torch::ScalarType dtype);

// x [B, T, heads, head_dim] rotated: x * cos + rotate_half(x) * sin.
torch::Tensor apply_rope(const torch::Tensor& x, const Rope& rope);

enum class MaskKind {
  CAUSAL,    // every query sees the keys up to its own slot (no padding, nothing cached before)
  NONE,      // every query sees every key (one new token, no padding)
  EXPLICIT,  // `allowed` says which keys each query sees
};

// Which key slots each query attends to; computed once per forward and shared by all layers.
struct AttentionMask {
  MaskKind kind = MaskKind::CAUSAL;
  torch::Tensor allowed;  // EXPLICIT: bool [B, 1, T, L] or [B, 1, 1, L]; true where attention is allowed
  torch::Tensor last_key{};  // optional [1] int64 on the device: slots after it hold no keys yet (a KV-cache slot step)
};

// RMSNorm as transformers computes it: in (at least) float32, cast back, times the weight.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// residual + input @ weight^T, as one GEMM when the dtypes allow it (not under autocast, which
// would cast the residual stream to bfloat16). in_place: the sum is written into `residual`
// (no autograd; saves the copy GEMM-with-bias makes of it).
torch::Tensor add_linear(const torch::Tensor& residual, const torch::Tensor& input, const torch::Tensor& weight,
                         bool in_place = false);

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(std::int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x) { return rms_norm(x, weight, eps_); }
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const weights::ModelConfig& config);
  // x [B, T, hidden] -> attention output [B, T, n_heads * head_dim], before o_proj. With a cache,
  // stores this step's keys/values in layer `layer` and attends over all cached slots.
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, const AttentionMask& mask, KvCache* cache,
                        std::int64_t layer);
  // Decoding: concatenates the q/k/v weights (and biases) so one GEMM projects all three and one
  // rotation covers q and k; used only while grad mode is off. false drops the copy. The copy is a
  // snapshot: refresh it after the parameters change.
  void set_fused(bool fused);
  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  std::int64_t n_heads_, n_kv_heads_, head_dim_;
  torch::Tensor qkv_weight_, qkv_bias_;  // defined while fused
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const weights::ModelConfig& config);
  // silu(gate_proj(x)) * up_proj(x): the input of down_proj.
  torch::Tensor forward(const torch::Tensor& x);
  // Decoding: one GEMM for gate and up (see AttentionImpl::set_fused).
  void set_fused(bool fused);
  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};

 private:
  torch::Tensor gate_up_weight_;  // defined while fused
};
TORCH_MODULE(Mlp);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const weights::ModelConfig& config);
  // x + attn(norm(x)), then + mlp(norm(.)); x [B, T, hidden]. Under c10::InferenceMode the result
  // is written into x's storage (x is consumed).
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, const AttentionMask& mask, KvCache* cache,
                        std::int64_t layer);
  Attention self_attn{nullptr};
  Mlp mlp{nullptr};
  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(DecoderLayer);

// The layer's forward that keeps only its input for backward and recomputes the layer there
// (activation checkpointing). Grad mode must be on; no cache.
torch::Tensor checkpointed_layer(DecoderLayerImpl& layer, const torch::Tensor& x, const Rope& rope,
                                 const AttentionMask& mask);

}  // namespace kernelrl::model
