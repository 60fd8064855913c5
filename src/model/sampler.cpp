// Generation loop: left padding, prefill, per-step sampling on the device, and host-side stop
// checks on one [B] copy of the sampled tokens per step (only when there is something to check).
#include "model/sampler.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

#include "model/autocast.hpp"
#include "model/decode_graph.hpp"
#include "model/decode_kernels.hpp"
#include "model/kv_cache.hpp"

namespace kernelrl::model {
namespace {

common::Fallible check_request(const std::vector<std::vector<std::int64_t>>& prompts, const SamplingParams& params,
                               std::int64_t vocab_size, const Detokenize& detokenize) {
  if (prompts.empty()) return common::Error{"generate: no prompts"};
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    if (prompts[b].empty()) return common::Error{"generate: prompt " + std::to_string(b) + " is empty"};
    for (auto id : prompts[b]) {
      if (id < 0 || id >= vocab_size) {
        return common::Error{"generate: prompt " + std::to_string(b) + " has token id " + std::to_string(id) +
                             " outside [0, " + std::to_string(vocab_size) + ")"};
      }
    }
  }
  if (!(params.temperature >= 0.0)) {
    return common::Error{"generate: temperature must be >= 0, got " + std::to_string(params.temperature)};
  }
  if (!(params.top_p > 0.0 && params.top_p <= 1.0)) {
    return common::Error{"generate: top_p must be in (0, 1], got " + std::to_string(params.top_p)};
  }
  if (params.max_new_tokens < 0) {
    return common::Error{"generate: max_new_tokens must be >= 0, got " + std::to_string(params.max_new_tokens)};
  }
  if (!params.stop_strings.empty() && !detokenize) {
    return common::Error{"generate: stop_strings need a detokenize function"};
  }
  for (const auto& stop : params.stop_strings) {
    if (stop.empty()) return common::Error{"generate: stop_strings contains an empty string"};
  }
  return common::Ok{};
}

// An independent generator for `device` seeded with `seed` (the device's default one is cloned,
// so the global RNG stream is left alone).
at::Generator make_generator(const torch::Device& device, std::uint64_t seed) {
  if (device.is_cpu()) return at::detail::createCPUGenerator(seed);
  at::Generator default_generator = at::globalContext().defaultGenerator(device);  // a handle on the same state
  at::Generator generator;
  {
    std::lock_guard<std::mutex> lock(default_generator.mutex());
    generator = default_generator.clone();
  }
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

// Keeps the fewest most likely tokens whose probabilities sum to >= top_p; the rest become -inf.
torch::Tensor top_p_filter(const torch::Tensor& z, double top_p) {
  auto [sorted, order] = z.sort(-1, /*descending=*/true);
  auto probs = sorted.softmax(-1);
  auto mass_before = probs.cumsum(-1) - probs;  // the most likely token always has 0 before it
  sorted.masked_fill_(mass_before >= top_p, -std::numeric_limits<double>::infinity());
  return torch::full_like(z, -std::numeric_limits<double>::infinity()).scatter(-1, order, sorted);
}

struct StepSample {
  torch::Tensor token;             // [B] int64
  torch::Tensor logprob;           // [B] float32: model log-prob at temperature 1
  torch::Tensor sampling_logprob;  // [B] float32: under the distribution sampled from
};

StepSample sample_step(const torch::Tensor& logits, const SamplingParams& params, at::Generator& generator) {
  auto z = logits.to(torch::kFloat32);
  auto logp = z.log_softmax(-1);
  StepSample out;
  if (params.temperature == 0.0) {
    out.token = z.argmax(-1);
    out.logprob = logp.gather(1, out.token.unsqueeze(1)).squeeze(1);
    out.sampling_logprob = torch::zeros_like(out.logprob);
    return out;
  }
  auto logp_sampling = logp;
  if (params.temperature != 1.0 || params.top_p < 1.0) {
    auto scaled = params.temperature == 1.0 ? z : z / params.temperature;
    if (params.top_p < 1.0) scaled = top_p_filter(scaled, params.top_p);
    logp_sampling = scaled.log_softmax(-1);
  }
  // Gumbel-max: argmax(log p - log E), E ~ Exp(1), draws from p with no host sync.
  auto exponential = torch::empty_like(logp_sampling).exponential_(1.0, generator).clamp_min_(1e-30);
  out.token = (logp_sampling - exponential.log()).argmax(-1);
  auto index = out.token.unsqueeze(1);
  out.logprob = logp.gather(1, index).squeeze(1);
  out.sampling_logprob = logp_sampling.gather(1, index).squeeze(1);
  return out;
}

// Samples step `step` into column `step` of tokens / logprobs / sampling_logprobs ([B, steps]) and
// returns the sampled tokens ([B] view of that column): one kernel where it applies, else libtorch.
torch::Tensor sample_into(const torch::Tensor& logits, const SamplingParams& params, at::Generator& generator,
                          const torch::Tensor& tokens, const torch::Tensor& logprobs,
                          const torch::Tensor& sampling_logprobs, std::int64_t step) {
  auto token = tokens.select(1, step);
  if (sample_kernel_applies(logits, params.top_p)) {
    sample_with_kernel(logits, params.temperature, generator, token, logprobs.select(1, step),
                       sampling_logprobs.select(1, step));
    return token;
  }
  auto s = sample_step(logits, params, generator);
  token.copy_(s.token);
  logprobs.select(1, step).copy_(s.logprob);
  sampling_logprobs.select(1, step).copy_(s.sampling_logprob);
  return token;
}

// Per-row stop bookkeeping on the host.
struct RowState {
  std::vector<std::int64_t> tokens;
  bool finished = false;
  std::string stop;  // what stopped it
};

// Whether the row's latest token completes a stop string: decodes only the tail of the row, long
// enough to hold the longest stop string even at one byte per token.
bool hits_stop_string(RowState& row, const SamplingParams& params, std::size_t window, const Detokenize& detokenize) {
  const auto n = row.tokens.size();
  const auto start = n > window ? n - window : 0;
  const auto tail = detokenize(std::span<const std::int64_t>(row.tokens.data() + start, n - start));
  for (const auto& stop : params.stop_strings) {
    if (tail.find(stop) != std::string::npos) {
      row.stop = stop;
      return true;
    }
  }
  return false;
}

// The row's text, cut right after the earliest stop string when one stopped it.
std::string final_text(const std::vector<std::int64_t>& tokens, const SamplingParams& params,
                       const Detokenize& detokenize) {
  auto text = detokenize(std::span<const std::int64_t>(tokens.data(), tokens.size()));
  std::size_t cut = std::string::npos;
  for (const auto& stop : params.stop_strings) {
    auto at = text.find(stop);
    if (at != std::string::npos) cut = std::min(cut, at + stop.size());
  }
  if (cut != std::string::npos) text.resize(cut);
  return text;
}

std::vector<Sample> run_generation(Transformer& model, const std::vector<std::vector<std::int64_t>>& prompts,
                                   const SamplingParams& params, const Detokenize& detokenize) {
  const auto batch = static_cast<std::int64_t>(prompts.size());
  std::int64_t prompt_len = 0;
  for (const auto& p : prompts) prompt_len = std::max<std::int64_t>(prompt_len, p.size());

  // Left padding: every row's last prompt token sits in the last column.
  std::vector<std::int64_t> ids(batch * prompt_len, 0), mask(batch * prompt_len, 0), pos(batch * prompt_len, 0);
  bool padded = false;
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto len = static_cast<std::int64_t>(prompts[b].size());
    padded = padded || len < prompt_len;
    for (std::int64_t i = 0; i < len; ++i) {
      const auto at = b * prompt_len + (prompt_len - len) + i;
      ids[at] = prompts[b][i];
      mask[at] = 1;
      pos[at] = i;
    }
  }
  const auto weight = model->output_weight();
  const auto device = weight.device();
  const auto activation_dtype =
      autocast_enabled(device.type()) ? autocast_dtype(device.type()) : weight.scalar_type();
  auto host = [&](std::vector<std::int64_t>& v) {
    return torch::from_blob(v.data(), {batch, prompt_len}, torch::kInt64).to(device);
  };

  c10::InferenceMode inference;
  const bool use_graph = params.cuda_graphs && device.is_cuda() && params.max_new_tokens > 1 && cuda_graphs_available();
  std::optional<GraphStream> graph_stream;  // first: every tensor of this generation lives on its stream
  if (use_graph) graph_stream.emplace(device);
  // Fused projections for the duration of this call; dropped on every way out.
  struct Fusion {
    Transformer& model;
    explicit Fusion(Transformer& m) : model(m) { model->set_fused_projections(true); }
    ~Fusion() { model->set_fused_projections(false); }
  } fusion(model);
  auto generator = make_generator(device, params.seed);
  const auto max_new = params.max_new_tokens;
  auto ids_t = host(ids), mask_t = host(mask), pos_t = host(pos);
  KvCache cache(model->config(), batch, prompt_len + std::max<std::int64_t>(max_new, 1),
                torch::TensorOptions().device(device).dtype(activation_dtype));
  auto int_options = torch::TensorOptions().device(device).dtype(torch::kInt64);
  auto tokens = torch::empty({batch, std::max<std::int64_t>(max_new, 1)}, int_options);
  auto logprobs = torch::empty({batch, std::max<std::int64_t>(max_new, 1)}, int_options.dtype(torch::kFloat32));
  auto sampling_logprobs = torch::empty_like(logprobs);

  std::vector<RowState> rows(batch);
  const bool watch = !params.stop_strings.empty() || !params.stop_token_ids.empty();
  std::size_t window = 0;
  for (const auto& stop : params.stop_strings) window = std::max(window, stop.size() + 8);
  std::int64_t n_steps = 0;
  std::optional<DecodeGraph> graph;
  if (use_graph) graph.emplace(model, cache);
  if (max_new > 0) {
    auto logits = model->forward_last(ids_t, pos_t, &cache, padded ? mask_t : torch::Tensor());
    auto next_pos = pos_t.select(1, prompt_len - 1) + 1;
    for (std::int64_t step = 0; step < max_new; ++step) {
      const auto sampled_token = sample_into(logits, params, generator, tokens, logprobs, sampling_logprobs, step);
      n_steps = step + 1;
      if (watch) {
        const auto sampled = sampled_token.to(torch::kCPU);
        const auto* sampled_ids = sampled.data_ptr<std::int64_t>();
        bool all_finished = true;
        for (std::int64_t b = 0; b < batch; ++b) {
          auto& row = rows[b];
          if (row.finished) continue;
          row.tokens.push_back(sampled_ids[b]);
          const auto& stop_ids = params.stop_token_ids;
          if (std::find(stop_ids.begin(), stop_ids.end(), sampled_ids[b]) != stop_ids.end()) {
            row.finished = true;
            row.stop = "token:" + std::to_string(sampled_ids[b]);
          } else if (!params.stop_strings.empty()) {
            row.finished = hits_stop_string(row, params, window, detokenize);
          }
          all_finished = all_finished && row.finished;
        }
        if (all_finished) break;
      }
      if (step + 1 == max_new) break;
      // The new token's keys/values go to slot prompt_len + step (the prompt filled the slots before).
      const auto step_tokens = sampled_token.view({batch, 1});
      logits = graph ? graph->step(step_tokens, next_pos.view({batch, 1}), prompt_len + step)
                     : model->forward_last(step_tokens, next_pos.view({batch, 1}), &cache);
      next_pos = next_pos + 1;
    }
  }

  const auto tokens_host = tokens.narrow(1, 0, n_steps).to(torch::kCPU).contiguous();
  const auto logprobs_host = logprobs.narrow(1, 0, n_steps).to(torch::kCPU).contiguous();
  const auto sampling_host = sampling_logprobs.narrow(1, 0, n_steps).to(torch::kCPU).contiguous();
  std::vector<Sample> samples(batch);
  for (std::int64_t b = 0; b < batch; ++b) {
    auto& sample = samples[b];
    const auto n = watch && rows[b].finished ? static_cast<std::int64_t>(rows[b].tokens.size()) : n_steps;
    const auto* t = tokens_host.data_ptr<std::int64_t>() + b * n_steps;
    const auto* lp = logprobs_host.data_ptr<float>() + b * n_steps;
    const auto* lps = sampling_host.data_ptr<float>() + b * n_steps;
    sample.token_ids.assign(t, t + n);
    sample.logprobs.assign(lp, lp + n);
    sample.sampling_logprobs.assign(lps, lps + n);
    const bool stopped = watch && rows[b].finished;
    sample.finish_reason = stopped ? "stop" : "length";
    sample.stop = stopped ? rows[b].stop : "";
    if (detokenize) sample.text = final_text(sample.token_ids, params, detokenize);
  }
  return samples;
}

}  // namespace

common::Expected<std::vector<Sample>> generate(Transformer& model, const std::vector<std::vector<std::int64_t>>& prompts,
                                               const SamplingParams& params, const Detokenize& detokenize) {
  if (auto ok = check_request(prompts, params, model->config().vocab_size, detokenize); !ok) return ok.error();
  try {
    return run_generation(model, prompts, params, detokenize);
  } catch (const c10::Error& e) {
    return common::Error{std::string("generate: ") + e.what_without_backtrace()};
  }
}

}  // namespace kernelrl::model
