#include "train/grpo.hpp"

#include <torch/torch.h>

namespace kernelrl::train {

GrpoOutput grpo_loss(const GrpoInputs& in, const GrpoConfig& config) {
  const auto mask = in.mask.to(in.logprobs.dtype());
  const auto advantage = in.advantages.to(in.logprobs.dtype()).unsqueeze(1);  // [B, 1]
  const auto log_ratio = in.logprobs - in.old_logprobs;
  const auto ratio = torch::exp(log_ratio);
  const auto unclipped = ratio * advantage;
  const auto clipped = torch::clamp(ratio, 1.0 - config.eps_low, 1.0 + config.eps_high) * advantage;
  auto per_token = -torch::min(unclipped, clipped);
  torch::Tensor tis;  // the sampler/trainer mismatch correction of the policy-gradient term
  if (config.tis_cap > 0 && in.sampler_logprobs.defined()) {
    torch::NoGradGuard no_grad;
    tis = torch::clamp_max(torch::exp(in.old_logprobs - in.sampler_logprobs), config.tis_cap);
  }
  if (tis.defined()) per_token = per_token * tis;
  torch::Tensor kl;
  if (config.kl_coef > 0 && in.ref_logprobs.defined()) {
    const auto ref_log_ratio = in.ref_logprobs - in.logprobs;
    kl = torch::exp(ref_log_ratio) - ref_log_ratio - 1;  // k3: unbiased, non-negative
    per_token = per_token + config.kl_coef * kl;
  }
  const double n_sequences = static_cast<double>(in.n_sequences > 0 ? in.n_sequences : in.logprobs.size(0));
  const double normaliser = n_sequences * static_cast<double>(config.max_response_tokens);

  GrpoOutput out;
  out.loss = (per_token * mask).sum() / normaliser;
  torch::NoGradGuard no_grad;
  const double n_tokens = mask.sum().item<double>();
  out.n_tokens = static_cast<std::int64_t>(n_tokens);
  if (n_tokens > 0) {
    const auto took_clipped = (clipped < unclipped).to(mask.dtype());
    out.clip_frac = (took_clipped * mask).sum().item<double>() / n_tokens;
    out.approx_kl = (0.5 * log_ratio.pow(2) * mask).sum().item<double>() / n_tokens;
    out.mean_ratio = (ratio * mask).sum().item<double>() / n_tokens;
    if (kl.defined()) out.kl_to_ref = (kl * mask).sum().item<double>() / n_tokens;
    if (tis.defined()) {
      out.tis_weight = (tis * mask).sum().item<double>() / n_tokens;
      out.tis_capped_frac = ((tis >= config.tis_cap).to(mask.dtype()) * mask).sum().item<double>() / n_tokens;
    }
  }
  return out;
}

}  // namespace kernelrl::train
