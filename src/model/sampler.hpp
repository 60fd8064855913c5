// Batched generation with the policy model: left-padded prompts, one prefill, then token-by-token
// decoding with the key/value cache, all on the model's device. Per row it stops on a stop token,
// a stop string (checked on the decoded tail of the row) or max_new_tokens. Sampling is the
// Gumbel-max trick on a seeded generator, so a (seed, batch, device) triple reproduces its samples.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "model/transformer.hpp"

namespace kernelrl::model {

struct SamplingParams {
  double temperature = 0.9;              // 0: greedy (argmax)
  double top_p = 1.0;                    // nucleus: keep the fewest top tokens whose probability sums to >= top_p
  std::int64_t max_new_tokens = 512;     // generated tokens per row at most
  std::vector<std::string> stop_strings; // a row stops once its generated text contains one (needs detokenize)
  std::vector<std::int64_t> stop_token_ids;  // a row stops after sampling one (e.g. eos); it is kept in token_ids
  std::uint64_t seed = 0;                // seeds the sampling generator
  // On CUDA, decode through a CUDA graph (model/decode_graph.hpp) where the build has them; the
  // tokens are those of the eager loop up to floating-point ties (attention reads the whole
  // cache under a mask instead of its filled part).
  bool cuda_graphs = true;
};

struct Sample {
  std::vector<std::int64_t> token_ids;  // generated tokens, through the one that stopped the row
  // log p(token) under the model at temperature 1, before top-p: what GRPO's ratio needs.
  std::vector<double> logprobs;
  // log p(token) under the distribution actually sampled from (temperature and top-p applied;
  // 0 for greedy). Equal to `logprobs` when temperature is 1 and top_p is 1.
  std::vector<double> sampling_logprobs;
  std::string finish_reason;  // "stop" (stop token or string) or "length"
  std::string stop;           // the stop string or "token:<id>" that ended the row; empty for "length"
  // detokenize(token_ids), cut right after the first stop string (kept); empty without detokenize.
  std::string text;
};

// Text of a token sequence; used for stop strings and Sample::text. May be empty when no stop
// strings are given.
using Detokenize = std::function<std::string(std::span<const std::int64_t>)>;

// Generates one Sample per prompt (token ids, each non-empty, < vocab_size) with `model` on its own
// device and dtype, under no grad. Errors (no prompts, an empty prompt, a token id out of range, bad
// params, stop strings without detokenize, torch errors) come back as values naming the culprit.
// Host syncs: one [B] copy per step when any stop condition is set, none otherwise.
common::Expected<std::vector<Sample>> generate(Transformer& model, const std::vector<std::vector<std::int64_t>>& prompts,
                                               const SamplingParams& params, const Detokenize& detokenize = {});

}  // namespace kernelrl::model
