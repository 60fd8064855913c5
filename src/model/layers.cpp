// The decoder's layers. Attention uses at::scaled_dot_product_attention (flash or memory-efficient
// kernels) on libtorch 2.x and a plain softmax(QK^T)V with the same numerics as transformers'
// eager path on 1.x. Queries that share a key/value head are attended as one group, so a cache of
// n_kv_heads heads is read as it is, never repeated per query head.
#include "model/layers.hpp"

#include <cmath>
#include <limits>

#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include "model/autocast.hpp"
#include "model/decode_kernels.hpp"
#include "model/kv_cache.hpp"

#define KERNELRL_TORCH_HAS_SDPA (TORCH_VERSION_MAJOR >= 2)
#define KERNELRL_TORCH_HAS_RMS_NORM \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace kernelrl::model {
namespace {

torch::nn::Linear make_linear(std::int64_t in, std::int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// [B, Hkv, T, D] -> [B, Hkv * group, T, D], kv head j serving query heads j*group .. j*group+group-1
// (transformers' repeat_kv).
torch::Tensor expand_kv(const torch::Tensor& kv, std::int64_t group) {
  if (group == 1) return kv;
  const auto b = kv.size(0), h = kv.size(1), t = kv.size(2), d = kv.size(3);
  return kv.unsqueeze(2).expand({b, h, group, t, d}).reshape({b, h * group, t, d});
}

#if !KERNELRL_TORCH_HAS_SDPA
// softmax(q k^T / sqrt(d) masked) v with the softmax in float32, as transformers' eager attention.
torch::Tensor manual_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               torch::Tensor allowed, bool causal) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = at::matmul(q, k.transpose(-2, -1)) * scale;
  if (causal) {
    const auto tq = q.size(-2), tk = k.size(-2);
    allowed = at::ones({tq, tk}, q.options().dtype(torch::kBool)).tril(tk - tq);
  }
  if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  const auto softmax_dtype = scores.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  auto probs = at::softmax(scores, -1, softmax_dtype);
  return at::matmul(probs.to(v.scalar_type()), v);
}
#endif

torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                   const torch::Tensor& allowed, bool causal) {
#if KERNELRL_TORCH_HAS_SDPA
  if (allowed.defined()) return at::scaled_dot_product_attention(q, k, v, allowed, 0.0, false);
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
#else
  return manual_attention(q, k, v, allowed, causal);
#endif
}

// q [B, T, H, D] over keys/values [B, Hkv, L, D] -> [B, T, H * D].
torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                     const AttentionMask& mask) {
  const auto b = q.size(0), t = q.size(1), h = q.size(2), d = q.size(3);
  const auto h_kv = k.size(1), group = h / h_kv;
  if (t == 1 && mask.kind != MaskKind::CAUSAL) {
    // Decoding one token: the model's own kernel where it applies (GPU, inference).
    const auto allowed = mask.kind == MaskKind::EXPLICIT ? mask.allowed : torch::Tensor();
    if (decode_attention_applies(q, k, v, allowed)) return decode_attention(q, k, v, allowed, mask.last_key);
  }
  if (mask.kind == MaskKind::CAUSAL) {
    // Square causal attention (training, prefill): one head per query head, so the flash kernel applies.
    auto out = sdpa(q.transpose(1, 2), expand_kv(k, group), expand_kv(v, group), {}, true);
    return out.transpose(1, 2).reshape({b, t, h * d});
  }
  // The `group` query heads of one kv head, times T positions, form one block of queries.
  auto q_grouped = q.view({b, t, h_kv, group, d}).permute({0, 2, 3, 1, 4}).reshape({b, h_kv, group * t, d});
  torch::Tensor allowed;
  if (mask.kind == MaskKind::EXPLICIT) {
    allowed = mask.allowed;  // [B, 1, T or 1, L]
    if (group > 1 && allowed.size(2) > 1) allowed = allowed.repeat({1, 1, group, 1});
  }
  auto out = sdpa(q_grouped, k, v, allowed, false);  // [B, Hkv, group * T, D]
  return out.view({b, h_kv, group, t, d}).permute({0, 3, 1, 2, 4}).reshape({b, t, h * d});
}

}  // namespace

Rope make_rope(const torch::Tensor& positions, std::int64_t head_dim, double theta, torch::ScalarType dtype) {
  auto pos = positions.dim() == 1 ? positions.unsqueeze(0) : positions;  // [B or 1, T]
  auto f32 = pos.options().dtype(torch::kFloat32);
  auto inv_freq = 1.0 / at::pow(theta, at::arange(0, head_dim, 2, pos.options().dtype(torch::kInt64)).to(torch::kFloat32) /
                                           static_cast<double>(head_dim));
  auto freqs = pos.to(f32).unsqueeze(-1) * inv_freq;  // [B, T, D/2]
  auto cos_half = freqs.cos(), sin_half = freqs.sin();
  Rope rope;
  rope.cos = at::cat({cos_half, cos_half}, -1).to(dtype).unsqueeze(2);
  rope.sin_signed = at::cat({-sin_half, sin_half}, -1).to(dtype).unsqueeze(2);
  return rope;
}

torch::Tensor apply_rope(const torch::Tensor& x, const Rope& rope) {
  return at::addcmul(x * rope.cos, x.roll(x.size(-1) / 2, -1), rope.sin_signed);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
#if KERNELRL_TORCH_HAS_RMS_NORM
  // One fused kernel on the GPU; it also computes in float32 and rounds once.
  if (x.is_cuda() && x.scalar_type() == weight.scalar_type()) return at::rms_norm(x, {weight.size(0)}, weight, eps);
#endif
  const auto compute = x.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
  auto xf = x.to(compute);
  auto normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

torch::Tensor add_linear(const torch::Tensor& residual, const torch::Tensor& input, const torch::Tensor& weight,
                         bool in_place) {
  const bool one_gemm = residual.scalar_type() == weight.scalar_type() && input.scalar_type() == weight.scalar_type() &&
                        !autocast_enabled(residual.device().type());
  if (!one_gemm) return in_place ? residual.add_(at::linear(input, weight)) : residual + at::linear(input, weight);
  const auto n = weight.size(0), k = weight.size(1);
  if (in_place && residual.is_contiguous()) {
    residual.view({-1, n}).addmm_(input.reshape({-1, k}), weight.t());  // no copy of the residual first
    return residual;
  }
  return at::addmm(residual.reshape({-1, n}), input.reshape({-1, k}), weight.t()).view(residual.sizes());
}

RmsNormImpl::RmsNormImpl(std::int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

AttentionImpl::AttentionImpl(const weights::ModelConfig& config)
    : n_heads_(config.n_heads), n_kv_heads_(config.n_kv_heads), head_dim_(config.head_dim) {
  const auto hidden = config.hidden_size;
  q_proj = register_module("q_proj", make_linear(hidden, n_heads_ * head_dim_, config.attention_bias));
  k_proj = register_module("k_proj", make_linear(hidden, n_kv_heads_ * head_dim_, config.attention_bias));
  v_proj = register_module("v_proj", make_linear(hidden, n_kv_heads_ * head_dim_, config.attention_bias));
  o_proj = register_module("o_proj", make_linear(n_heads_ * head_dim_, hidden, false));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const Rope& rope, const AttentionMask& mask,
                                     KvCache* cache, std::int64_t layer) {
  const auto b = x.size(0), t = x.size(1);
  torch::Tensor q, k, v;
  if (qkv_weight_.defined() && !torch::GradMode::is_enabled()) {
    const auto n_qk = (n_heads_ + n_kv_heads_) * head_dim_;
    auto qkv = at::linear(x, qkv_weight_, qkv_bias_);
    if (cache != nullptr && rope_store_applies(qkv, rope, *cache, n_heads_, n_kv_heads_, head_dim_)) {
      // A cached forward on the GPU (prefill or decoding): rotation and cache write in one kernel.
      q = rope_and_store(qkv, rope, *cache, layer, n_heads_, n_kv_heads_, head_dim_);
      auto [k_all, v_all] = cache->stored(layer);
      return attend(q, k_all, v_all, mask);
    }
    auto qk = apply_rope(qkv.narrow(-1, 0, n_qk).view({b, t, n_heads_ + n_kv_heads_, head_dim_}), rope);
    q = qk.narrow(2, 0, n_heads_);
    k = qk.narrow(2, n_heads_, n_kv_heads_);
    v = qkv.narrow(-1, n_qk, n_kv_heads_ * head_dim_).view({b, t, n_kv_heads_, head_dim_});
  } else {
    q = apply_rope(q_proj(x).view({b, t, n_heads_, head_dim_}), rope);
    k = apply_rope(k_proj(x).view({b, t, n_kv_heads_, head_dim_}), rope);
    v = v_proj(x).view({b, t, n_kv_heads_, head_dim_});
  }
  if (cache != nullptr) {
    auto [k_all, v_all] = cache->store(layer, k, v);
    return attend(q, k_all, v_all, mask);
  }
  return attend(q, k.transpose(1, 2), v.transpose(1, 2), mask);
}

void AttentionImpl::set_fused(bool fused) {
  torch::NoGradGuard no_grad;
  qkv_weight_ = fused ? at::cat({q_proj->weight, k_proj->weight, v_proj->weight}) : torch::Tensor();
  qkv_bias_ = fused && q_proj->bias.defined() ? at::cat({q_proj->bias, k_proj->bias, v_proj->bias}) : torch::Tensor();
}

MlpImpl::MlpImpl(const weights::ModelConfig& config) {
  gate_proj = register_module("gate_proj", make_linear(config.hidden_size, config.intermediate_size, false));
  up_proj = register_module("up_proj", make_linear(config.hidden_size, config.intermediate_size, false));
  down_proj = register_module("down_proj", make_linear(config.intermediate_size, config.hidden_size, false));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  if (gate_up_weight_.defined() && !torch::GradMode::is_enabled()) {
    const auto inner = gate_up_weight_.size(0) / 2;
    auto gate_up = at::linear(x, gate_up_weight_);
    if (swiglu_applies(gate_up)) return swiglu(gate_up);
    return at::silu(gate_up.narrow(-1, 0, inner)) * gate_up.narrow(-1, inner, inner);
  }
  return at::silu(gate_proj(x)) * up_proj(x);
}

void MlpImpl::set_fused(bool fused) {
  torch::NoGradGuard no_grad;
  gate_up_weight_ = fused ? at::cat({gate_proj->weight, up_proj->weight}) : torch::Tensor();
}

DecoderLayerImpl::DecoderLayerImpl(const weights::ModelConfig& config) {
  self_attn = register_module("self_attn", Attention(config));
  mlp = register_module("mlp", Mlp(config));
  input_layernorm = register_module("input_layernorm", RmsNorm(config.hidden_size, config.rms_norm_eps));
  post_attention_layernorm =
      register_module("post_attention_layernorm", RmsNorm(config.hidden_size, config.rms_norm_eps));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const Rope& rope, const AttentionMask& mask,
                                        KvCache* cache, std::int64_t layer) {
  auto attn = self_attn(input_layernorm(x), rope, mask, cache, layer);
  // Under InferenceMode nothing keeps the residual stream for a backward pass: it is updated in place.
  const bool in_place = c10::InferenceMode::is_enabled();
  auto h = add_linear(x, attn, self_attn->o_proj->weight, in_place);
  return add_linear(h, mlp(post_attention_layernorm(h)), mlp->down_proj->weight, in_place);
}

}  // namespace kernelrl::model
