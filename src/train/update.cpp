#include "train/update.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

#include <torch/torch.h>

#include "model/autocast.hpp"

namespace kernelrl::train {

namespace {

// A right-padded micro-batch: inputs are sequence[:-1], targets sequence[1:], the mask marks the
// targets that are response tokens.
struct MicroBatch {
  torch::Tensor input_ids, targets, mask, advantages;
  std::vector<std::size_t> rows;  // indexes into the sample list
};

MicroBatch make_micro_batch(const std::vector<TrainingSample>& samples, const std::vector<std::size_t>& rows,
                            const torch::Device& device) {
  std::int64_t t_max = 0;
  for (auto i : rows) t_max = std::max<std::int64_t>(t_max, samples[i].prompt.size() + samples[i].response.size() - 1);
  const auto b = static_cast<std::int64_t>(rows.size());
  auto ids = torch::zeros({b, t_max}, torch::kLong);
  auto targets = torch::zeros({b, t_max}, torch::kLong);
  auto mask = torch::zeros({b, t_max}, torch::kFloat);
  auto adv = torch::zeros({b}, torch::kFloat);
  auto ids_a = ids.accessor<std::int64_t, 2>();
  auto tgt_a = targets.accessor<std::int64_t, 2>();
  auto mask_a = mask.accessor<float, 2>();
  for (std::int64_t r = 0; r < b; ++r) {
    const auto& s = samples[rows[r]];
    std::vector<std::int64_t> seq(s.prompt);
    seq.insert(seq.end(), s.response.begin(), s.response.end());
    const auto n_prompt = static_cast<std::int64_t>(s.prompt.size());
    for (std::int64_t t = 0; t + 1 < static_cast<std::int64_t>(seq.size()); ++t) {
      ids_a[r][t] = seq[t];
      tgt_a[r][t] = seq[t + 1];
      mask_a[r][t] = t + 1 >= n_prompt ? 1.f : 0.f;
    }
    adv[r] = static_cast<float>(s.advantage);
  }
  return {ids.to(device), targets.to(device), mask.to(device), adv.to(device), rows};
}

// Groups `rows` into micro-batches whose padded size (rows x longest) stays within the budget.
std::vector<std::vector<std::size_t>> pack(const std::vector<TrainingSample>& samples, std::vector<std::size_t> rows,
                                           std::int64_t budget) {
  auto length = [&](std::size_t i) { return static_cast<std::int64_t>(samples[i].prompt.size() + samples[i].response.size()); };
  std::sort(rows.begin(), rows.end(), [&](auto a, auto b) { return length(a) > length(b); });
  std::vector<std::vector<std::size_t>> out;
  for (auto i : rows) {
    if (!out.empty()) {
      auto& last = out.back();
      const std::int64_t longest = length(last.front());  // sorted: the first is the longest
      if (longest * static_cast<std::int64_t>(last.size() + 1) <= budget) {
        last.push_back(i);
        continue;
      }
    }
    out.push_back({i});
  }
  return out;
}

torch::Tensor response_logprobs(model::Transformer& model, bool bf16_autocast, double temperature, const MicroBatch& mb,
                                bool entropy, torch::Tensor* entropy_out) {
  std::optional<model::AutocastScope> autocast;
  if (bf16_autocast) autocast.emplace(mb.input_ids.device().type());
  model::TokenLogprobsOptions options;
  options.with_entropy = entropy;
  options.temperature = temperature;
  auto out = model->token_logprobs(mb.input_ids, mb.targets, mb.mask, options);
  if (entropy_out) *entropy_out = out.entropy;
  return out.logprobs;
}

// Sums over tokens, and their count, that the statistics are means of (summed over the ranks).
struct TokenSums {
  double sum = 0;
  double max = 0;
  std::int64_t n = 0;
};

// The mismatch between the recomputed old log-probs and the sampler's own, over the response
// tokens of the samples that carry them (a sample's response token k is target position
// prompt + k - 1).
TokenSums compare_with_sampler(const std::vector<TrainingSample>& samples, const std::vector<torch::Tensor>& old_logprobs) {
  TokenSums out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (!old_logprobs[i].defined() || s.sampler_logprobs.size() != s.response.size()) continue;
    const auto recomputed = old_logprobs[i]
                                .slice(0, static_cast<std::int64_t>(s.prompt.size()) - 1)
                                .to(torch::kCPU, torch::kDouble)
                                .contiguous();
    const double* lp = recomputed.data_ptr<double>();
    for (std::size_t k = 0; k < s.response.size(); ++k) {
      const double diff = std::abs(lp[k] - s.sampler_logprobs[k]);
      out.sum += diff;
      out.max = std::max(out.max, diff);
      ++out.n;
    }
  }
  return out;
}

// The sum of -log p over the response tokens of the samples `rows` under the old policy.
TokenSums response_nll(const std::vector<TrainingSample>& samples, const std::vector<torch::Tensor>& old_logprobs,
                       const std::vector<std::size_t>& rows) {
  TokenSums out;
  for (auto i : rows) {
    const auto& s = samples[i];
    if (!old_logprobs[i].defined()) continue;
    out.sum -= old_logprobs[i].slice(0, static_cast<std::int64_t>(s.prompt.size()) - 1).sum().item<double>();
    out.n += static_cast<std::int64_t>(s.response.size());
  }
  return out;
}

// The log-probs of the samples `rows` (each: its prompt + response - 1 targets, 0 on the prompt's)
// under `model` without grad: the old policy's before this batch's updates, or the frozen
// reference's. Other samples' entries stay undefined.
std::vector<torch::Tensor> frozen_logprobs(model::Transformer& model, bool bf16_autocast,
                                           const std::vector<TrainingSample>& samples,
                                           const std::vector<std::size_t>& rows, const UpdateConfig& config,
                                           const torch::Device& device) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out(samples.size());
  for (const auto& group : pack(samples, rows, config.micro_batch_tokens)) {
    auto mb = make_micro_batch(samples, group, device);
    auto lp = response_logprobs(model, bf16_autocast, config.temperature, mb, false, nullptr);
    for (std::size_t r = 0; r < group.size(); ++r) {
      const auto& s = samples[group[r]];
      out[group[r]] = lp[r].slice(0, 0, static_cast<std::int64_t>(s.prompt.size() + s.response.size() - 1));
    }
  }
  return out;
}

// The rows `group` of `per_sample`, each zero-padded to `length`, stacked: [group, length].
torch::Tensor padded_rows(const std::vector<torch::Tensor>& per_sample, const std::vector<std::size_t>& group,
                          std::int64_t length) {
  std::vector<torch::Tensor> rows;
  for (auto i : group) {
    const auto& o = per_sample[i];
    rows.push_back(torch::cat({o, torch::zeros({length - o.size(0)}, o.options())}));
  }
  return torch::stack(rows);
}

// One optimiser step's share of the batch: the samples it trains on, and the number of sequences
// its loss is divided by (times the length L), a constant whatever the rows hold.
struct Minibatch {
  std::vector<std::size_t> rows;  // trainable samples only
  std::int64_t n_sequences = 0;   // its share of the configured batch
};

// Splits the whole batch, seeded, into n_minibatches parts first, and only then leaves out the
// samples that add no gradient (advantage 0 without a KL term, when skipping) or cannot be
// trained (no prompt or no response): skipping changes neither which minibatch a sample lands in
// nor any normaliser (Dr. GRPO's constant: a batch where many groups carry no signal does not take
// a larger step). `samples` stand at `placement.position` in the whole batch of placement.n_samples
// (one process: all of it, in order); each minibatch keeps the rows of `samples` it holds.
std::vector<Minibatch> split(const std::vector<TrainingSample>& samples, const GlobalPlacement& placement,
                             const UpdateConfig& config, std::uint64_t seed) {
  const std::size_t n = placement.n_samples;
  constexpr std::size_t kElsewhere = static_cast<std::size_t>(-1);  // another rank's sample
  std::vector<std::size_t> local(n, kElsewhere);
  for (std::size_t i = 0; i < samples.size(); ++i) local[placement.position[i]] = i;
  const std::size_t batch = config.n_batch_samples > 0 ? static_cast<std::size_t>(config.n_batch_samples) : n;
  const std::size_t k_steps =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::max(config.n_minibatches, 1)), 1, std::max<std::size_t>(n, 1));
  const bool skip_zero = config.skip_zero_advantage && config.grpo.kl_coef == 0;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Minibatch> out(k_steps);
  for (std::size_t k = 0; k < k_steps; ++k) {
    out[k].n_sequences = static_cast<std::int64_t>(batch * (k + 1) / k_steps - batch * k / k_steps);
    for (std::size_t pos = n * k / k_steps; pos < n * (k + 1) / k_steps; ++pos) {
      const std::size_t i = local[order[pos]];
      if (i == kElsewhere) continue;
      const TrainingSample& s = samples[i];
      if (s.prompt.empty() || s.response.empty() || (skip_zero && s.advantage == 0)) continue;
      out[k].rows.push_back(i);
    }
  }
  return out;
}

}  // namespace

namespace {

// Each minibatch's trainable rows over all ranks (the rank's own without a group): a minibatch
// takes an optimiser step on every rank, or on none.
common::Expected<std::vector<double>> global_row_counts(const std::vector<Minibatch>& minibatches, RankGroup* group) {
  std::vector<double> counts;
  for (const auto& mb : minibatches) counts.push_back(static_cast<double>(mb.rows.size()));
  if (group) {
    if (auto s = group->sum_values(counts); !s) return s.error();
  }
  return counts;
}

// What the statistics are made of: sums over trained tokens and samples, as this rank has them.
struct StatSums {
  double loss = 0;  // the minibatches' losses, each divided by the number of minibatches
  double n_tokens = 0, n_samples = 0, clip = 0, kl = 0, kl_ref = 0, entropy = 0, tis = 0, tis_capped = 0;
  TokenSums sampler_diff, nll;
};

// The update's statistics from the sums, made the whole batch's first when there are ranks (the
// same on every rank). `stats` holds the gradient norm and the optimiser steps already.
common::Fallible finish_stats(StatSums sums, RankGroup* group, UpdateStats& stats) {
  double sampler_diff_n = static_cast<double>(sums.sampler_diff.n), nll_n = static_cast<double>(sums.nll.n);
  if (group) {
    std::vector<double> totals = {sums.loss, sums.n_tokens, sums.n_samples, sums.clip, sums.kl, sums.kl_ref,
                                  sums.entropy, sums.sampler_diff.sum, sampler_diff_n, sums.nll.sum, nll_n,
                                  sums.tis, sums.tis_capped};
    if (auto s = group->sum_values(totals); !s) return s;
    std::vector<double> maxima = {sums.sampler_diff.max};
    if (auto s = group->max_values(maxima); !s) return s;
    std::tie(sums.loss, sums.n_tokens, sums.n_samples, sums.clip, sums.kl, sums.kl_ref) =
        std::tuple(totals[0], totals[1], totals[2], totals[3], totals[4], totals[5]);
    std::tie(sums.entropy, sums.sampler_diff.sum, sampler_diff_n, sums.nll.sum, nll_n, sums.sampler_diff.max) =
        std::tuple(totals[6], totals[7], totals[8], totals[9], totals[10], maxima[0]);
    std::tie(sums.tis, sums.tis_capped) = std::tuple(totals[11], totals[12]);
  }
  stats.loss = sums.loss;
  stats.n_tokens = static_cast<std::int64_t>(sums.n_tokens);
  stats.n_samples = static_cast<std::int64_t>(sums.n_samples);
  stats.sampler_logprob_diff_max = sums.sampler_diff.max;
  if (sampler_diff_n > 0) stats.sampler_logprob_diff_mean = sums.sampler_diff.sum / sampler_diff_n;
  stats.response_nll = nll_n > 0 ? sums.nll.sum / nll_n : 0.0;
  if (stats.n_tokens > 0) {
    stats.clip_frac = sums.clip / stats.n_tokens;
    stats.approx_kl = sums.kl / stats.n_tokens;
    stats.kl_to_ref = sums.kl_ref / stats.n_tokens;
    stats.entropy = sums.entropy / stats.n_tokens;
    stats.tis_weight = sums.tis / stats.n_tokens;
    stats.tis_capped_frac = sums.tis_capped / stats.n_tokens;
  }
  return common::Ok{};
}

// Per sample, laid out as `old_logprobs` (the positions before each target token): the sampler's
// log-probs at the response's positions where it reported them, the recomputed ones elsewhere (and
// for samples without them), so the truncated importance weight is 1 wherever nothing is known.
std::vector<torch::Tensor> sampler_logprobs_like(const std::vector<TrainingSample>& samples,
                                                 const std::vector<torch::Tensor>& old_logprobs) {
  std::vector<torch::Tensor> out(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!old_logprobs[i].defined()) continue;
    out[i] = old_logprobs[i].clone();
    const auto& s = samples[i];
    if (s.sampler_logprobs.size() != s.response.size() || s.response.empty()) continue;
    const auto reported = torch::tensor(s.sampler_logprobs, torch::kFloat64).to(out[i].dtype()).to(out[i].device());
    out[i].slice(0, static_cast<std::int64_t>(s.prompt.size()) - 1).copy_(reported);
  }
  return out;
}

// The identity placement: the samples are the whole batch.
GlobalPlacement whole_batch(std::size_t n) {
  GlobalPlacement p{n, std::vector<std::size_t>(n)};
  std::iota(p.position.begin(), p.position.end(), 0);
  return p;
}

}  // namespace

common::Expected<UpdateStats> update_policy(const UpdateModels& models, torch::optim::Optimizer& optimizer,
                                            std::vector<TrainingSample> samples, const UpdateConfig& config,
                                            std::uint64_t seed, const RankBatch* rank_batch) {
  UpdateStats stats;
  const bool with_kl = config.grpo.kl_coef > 0;
  if (with_kl && !models.reference) {
    return common::make_error("a KL coefficient of " + std::to_string(config.grpo.kl_coef) +
                              " needs a reference model (UpdateModels::reference), and none was given");
  }
  RankGroup* group = rank_batch ? rank_batch->group : nullptr;
  if (rank_batch && rank_batch->placement.position.size() != samples.size()) {
    return common::make_error("data parallel: " + std::to_string(samples.size()) + " samples but " +
                              std::to_string(rank_batch->placement.position.size()) + " places in the whole batch");
  }
  const std::vector<Minibatch> minibatches =
      split(samples, rank_batch ? rank_batch->placement : whole_batch(samples.size()), config, seed);
  std::vector<std::size_t> trained;
  for (const auto& mb : minibatches) trained.insert(trained.end(), mb.rows.begin(), mb.rows.end());
  auto rows_everywhere = global_row_counts(minibatches, group);
  if (!rows_everywhere) return rows_everywhere.error();
  if (std::accumulate(rows_everywhere->begin(), rows_everywhere->end(), 0.0) == 0) return stats;
  model::Transformer model = models.policy;
  try {
    model->train();
    const torch::Device device = model->parameters().front().device();
    // The sampling policy's log-probabilities, recomputed with the same forward as training; and
    // the frozen reference's, for the KL term.
    const auto old_logprobs = frozen_logprobs(model, models.bf16_autocast, samples, trained, config, device);
    StatSums sums;
    sums.sampler_diff = compare_with_sampler(samples, old_logprobs);
    sums.nll = response_nll(samples, old_logprobs, trained);
    const bool with_tis = config.grpo.tis_cap > 0;
    std::vector<torch::Tensor> sampler_logprobs;
    if (with_tis) sampler_logprobs = sampler_logprobs_like(samples, old_logprobs);
    std::vector<torch::Tensor> ref_logprobs;
    if (with_kl) {
      model::Transformer reference = models.reference;  // a handle: the module is shared
      ref_logprobs = frozen_logprobs(reference, models.bf16_autocast, samples, trained, config, device);
    }
    for (std::size_t k = 0; k < minibatches.size(); ++k) {
      const Minibatch& minibatch = minibatches[k];
      if ((*rows_everywhere)[k] == 0) continue;  // no gradient on any rank: no optimiser step (its loss counts 0)
      optimizer.zero_grad();
      double step_loss = 0;
      for (const auto& rows : pack(samples, minibatch.rows, config.micro_batch_tokens)) {
        auto mb = make_micro_batch(samples, rows, device);
        torch::Tensor entropy;
        auto lp = response_logprobs(model, models.bf16_autocast, config.temperature, mb, true, &entropy);
        GrpoInputs in;
        in.logprobs = lp;
        in.old_logprobs = padded_rows(old_logprobs, rows, lp.size(1));
        if (with_kl) in.ref_logprobs = padded_rows(ref_logprobs, rows, lp.size(1));
        if (with_tis) in.sampler_logprobs = padded_rows(sampler_logprobs, rows, lp.size(1));
        in.advantages = mb.advantages;
        in.mask = mb.mask;
        in.n_sequences = minibatch.n_sequences;
        GrpoOutput out = grpo_loss(in, config.grpo);
        out.loss.backward();
        step_loss += out.loss.item<double>();
        sums.n_tokens += static_cast<double>(out.n_tokens);
        sums.clip += out.clip_frac * out.n_tokens;
        sums.kl += out.approx_kl * out.n_tokens;
        sums.kl_ref += out.kl_to_ref * out.n_tokens;
        sums.tis += out.tis_weight * out.n_tokens;
        sums.tis_capped += out.tis_capped_frac * out.n_tokens;
        if (entropy.defined()) sums.entropy += (entropy * mb.mask).sum().item<double>();
      }
      if (group) {  // each rank's loss is divided by the whole minibatch's constant: the sum is its gradient
        if (auto s = group->sum_gradients(model->parameters()); !s) return s.error();
      }
      const double norm = torch::nn::utils::clip_grad_norm_(model->parameters(), config.max_grad_norm);
      optimizer.step();
      stats.grad_norm += norm;
      sums.loss += step_loss / static_cast<double>(minibatches.size());
      ++stats.n_optimizer_steps;
    }
    stats.grad_norm /= stats.n_optimizer_steps;
    sums.n_samples = static_cast<double>(trained.size());
    if (auto s = finish_stats(sums, group, stats); !s) return s.error();
    model->eval();
  } catch (const c10::Error& e) {
    return common::make_error(std::string("policy update failed: ") + e.what_without_backtrace());
  }
  return stats;
}

}  // namespace kernelrl::train
