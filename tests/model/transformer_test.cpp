// The transformer against itself and against definitions: finite-difference gradients, the
// chunked log-prob function against log_softmax of full logits, cached decoding against a full
// forward (also left-padded), activation checkpointing, tied embeddings, weight loading errors.
#include "model/transformer.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "model/autocast.hpp"
#include "model/config_check.hpp"
#include "model/kv_cache.hpp"
#include "model_test_util.hpp"

namespace kernelrl::model {
namespace {

using testing::random_ids;
using testing::tiny_config;
using testing::tiny_model;

std::set<std::string> expected_names(const weights::ModelConfig& c) {
  std::set<std::string> names{"model.embed_tokens.weight", "model.norm.weight"};
  if (!c.tie_word_embeddings) names.insert("lm_head.weight");
  for (int i = 0; i < c.n_layers; ++i) {
    const auto p = "model.layers." + std::to_string(i) + ".";
    for (const char* m : {"q_proj", "k_proj", "v_proj", "o_proj"}) names.insert(p + "self_attn." + m + ".weight");
    if (c.attention_bias) {
      for (const char* m : {"q_proj", "k_proj", "v_proj"}) names.insert(p + "self_attn." + m + ".bias");
    }
    for (const char* m : {"gate_proj", "up_proj", "down_proj"}) names.insert(p + "mlp." + m + ".weight");
    names.insert(p + "input_layernorm.weight");
    names.insert(p + "post_attention_layernorm.weight");
  }
  return names;
}

TEST(Transformer, ParameterNamesAreHuggingFaces) {
  for (bool tied : {false, true}) {
    for (bool qwen2 : {false, true}) {
      const auto config = tiny_config(tied, qwen2);
      Transformer model(config);
      std::set<std::string> names;
      for (const auto& item : model->named_parameters()) names.insert(item.key());
      EXPECT_EQ(names, expected_names(config)) << "tied=" << tied << " qwen2=" << qwen2;
      EXPECT_EQ(model->named_parameters()["model.layers.1.self_attn.k_proj.weight"].sizes(),
                (std::vector<std::int64_t>{2 * 8, 32}));
    }
  }
}

TEST(Transformer, ConfigErrorsNameTheField) {
  auto config = tiny_config();
  config.n_kv_heads = 3;
  auto model = make_transformer(config);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("n_kv_heads"), std::string::npos) << model.error().message;
  config = tiny_config();
  config.hidden_size = 0;
  EXPECT_NE(check_config(config).error().message.find("hidden_size"), std::string::npos);
  config = tiny_config();
  config.architecture = "gpt2";
  EXPECT_NE(check_config(config).error().message.find("gpt2"), std::string::npos);
  EXPECT_TRUE(make_transformer(tiny_config()).ok());
}

// Central differences of `loss` in one parameter entry against autograd, relative error < 1e-5.
void expect_gradient_matches(Transformer& model, const std::string& name, const std::function<torch::Tensor()>& loss) {
  auto param = model->named_parameters()[name];
  model->zero_grad();
  loss().backward();
  auto grad = param.grad().reshape(-1);
  // Check the entry with the largest gradient and one more in the middle of the tensor.
  const auto biggest = grad.abs().argmax().item<std::int64_t>();
  for (std::int64_t index : {biggest, grad.numel() / 2}) {
    const double h = 1e-6;
    auto flat = param.data().view(-1);
    const double original = flat[index].item<double>();
    double up, down;
    {
      torch::NoGradGuard no_grad;
      flat[index] = original + h;
      up = loss().item<double>();
      flat[index] = original - h;
      down = loss().item<double>();
      flat[index] = original;
    }
    const double numeric = (up - down) / (2 * h);
    const double analytic = grad[index].item<double>();
    const double scale = std::max({std::abs(numeric), std::abs(analytic), 1e-3});
    EXPECT_LT(std::abs(numeric - analytic) / scale, 1e-5)
        << name << "[" << index << "]: finite difference " << numeric << ", autograd " << analytic;
  }
}

TEST(Transformer, GradientsMatchFiniteDifferences) {
  auto model = tiny_model(tiny_config(false, true));
  auto ids = random_ids(2, 7, 50);
  torch::manual_seed(3);
  auto weights = torch::randn({2, 7, 50}, torch::kFloat64);
  auto loss = [&] { return (model->forward(ids) * weights).sum(); };
  for (const char* name : {"model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.bias",
                           "model.layers.0.input_layernorm.weight", "model.layers.1.mlp.down_proj.weight",
                           "model.norm.weight", "model.embed_tokens.weight", "lm_head.weight"}) {
    expect_gradient_matches(model, name, loss);
  }
}

TEST(Transformer, TokenLogprobGradientsMatchFiniteDifferences) {
  auto model = tiny_model(tiny_config(true));
  auto ids = random_ids(2, 6, 50);
  auto targets = random_ids(2, 6, 50, 9);
  auto mask = torch::tensor({1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0}, torch::kInt64).view({2, 6});
  TokenLogprobsOptions options;
  options.chunk_rows = 3;
  options.with_entropy = true;
  options.temperature = 0.8;
  auto loss = [&] {
    auto out = model->token_logprobs(ids, targets, mask, options);
    return out.logprobs.sum() * 0.7 + out.entropy.sum() * 0.3;
  };
  for (const char* name : {"model.embed_tokens.weight", "model.layers.1.self_attn.v_proj.weight",
                           "model.layers.0.post_attention_layernorm.weight", "model.norm.weight"}) {
    expect_gradient_matches(model, name, loss);
  }
}

TEST(Transformer, TokenLogprobsEqualLogSoftmaxOfForwardLogits) {
  auto model = tiny_model(tiny_config());
  auto ids = random_ids(3, 9, 50);
  auto targets = random_ids(3, 9, 50, 11);
  auto mask = (torch::arange(27).view({3, 9}) % 4 != 1).to(torch::kInt64);
  TokenLogprobsOptions options;
  options.chunk_rows = 5;
  options.with_entropy = true;
  options.temperature = 0.7;
  auto out = model->token_logprobs(ids, targets, mask, options);
  auto logp = (model->forward(ids) / 0.7).log_softmax(-1);
  auto expected = logp.gather(2, targets.unsqueeze(2)).squeeze(2) * mask;
  auto expected_entropy = -(logp.exp() * logp).sum(-1) * mask;
  EXPECT_TRUE(torch::allclose(out.logprobs, expected, 1e-10, 1e-10));
  EXPECT_TRUE(torch::allclose(out.entropy, expected_entropy, 1e-10, 1e-10));

  // Gradients agree with those of the materialised computation.
  auto weights = torch::randn({3, 9}, torch::kFloat64);
  model->zero_grad();
  (out.logprobs * weights).sum().add(out.entropy.sum()).backward();
  std::map<std::string, torch::Tensor> fused;
  for (const auto& item : model->named_parameters()) fused[item.key()] = item.value().grad().clone();
  model->zero_grad();
  (expected * weights).sum().add(expected_entropy.sum()).backward();
  for (const auto& item : model->named_parameters()) {
    EXPECT_TRUE(torch::allclose(fused[item.key()], item.value().grad(), 1e-9, 1e-11)) << item.key();
  }
  // No mask, no temperature, log-probs alone in the loss (the entropy computed but unused).
  auto all = model->token_logprobs(ids, targets);
  auto plain = model->forward(ids).log_softmax(-1).gather(2, targets.unsqueeze(2)).squeeze(2);
  EXPECT_TRUE(torch::allclose(all.logprobs, plain, 1e-10, 1e-10));
  EXPECT_FALSE(all.entropy.defined());
  for (bool with_entropy : {false, true}) {
    model->zero_grad();
    (model->token_logprobs(ids, targets, {}, {4, with_entropy, 1.0}).logprobs * weights).sum().backward();
    for (const auto& item : model->named_parameters()) fused[item.key()] = item.value().grad().clone();
    model->zero_grad();
    (model->forward(ids).log_softmax(-1).gather(2, targets.unsqueeze(2)).squeeze(2) * weights).sum().backward();
    for (const auto& item : model->named_parameters()) {
      EXPECT_TRUE(torch::allclose(fused[item.key()], item.value().grad(), 1e-9, 1e-11)) << item.key();
    }
  }
}

TEST(Transformer, ActivationCheckpointingGivesIdenticalGradients) {
  auto model = tiny_model(tiny_config(false, true));
  auto ids = random_ids(2, 8, 50);
  auto targets = random_ids(2, 8, 50, 5);
  auto grads = [&](bool checkpointing) {
    model->set_activation_checkpointing(checkpointing);
    model->zero_grad();
    auto out = model->token_logprobs(ids, targets, {}, {2048, true, 1.0});
    (out.logprobs.sum() + out.entropy.sum()).backward();
    return testing::parameter_grads(model);
  };
  auto plain = grads(false);
  auto recomputed = grads(true);
  for (const auto& [name, g] : plain) {
    EXPECT_TRUE(torch::allclose(g, recomputed[name], 1e-12, 1e-14)) << name;
  }
  // Left padding (an explicit mask) goes through the checkpoint too.
  auto mask = torch::ones({2, 8}, torch::kInt64);
  mask.index_put_({1, torch::indexing::Slice(0, 3)}, 0);
  model->set_activation_checkpointing(true);
  model->zero_grad();
  model->forward(ids, {}, nullptr, mask).sum().backward();
  auto with = model->named_parameters()["model.layers.0.self_attn.q_proj.weight"].grad().clone();
  model->set_activation_checkpointing(false);
  model->zero_grad();
  model->forward(ids, {}, nullptr, mask).sum().backward();
  EXPECT_TRUE(torch::allclose(with, model->named_parameters()["model.layers.0.self_attn.q_proj.weight"].grad(),
                              1e-12, 1e-14));
}

TEST(Transformer, FusedProjectionsGiveTheSameLogitsAndNeverTrain) {
  auto model = tiny_model(tiny_config(false, true));
  auto ids = random_ids(2, 6, 50);
  torch::Tensor plain, fused;
  {
    torch::NoGradGuard no_grad;
    plain = model->forward(ids);
    model->set_fused_projections(true);
    fused = model->forward(ids);
  }
  EXPECT_TRUE(torch::allclose(plain, fused, 1e-12, 1e-12));
  // With grad on, the separate projections run, so their weights get gradients.
  model->zero_grad();
  model->forward(ids).sum().backward();
  EXPECT_TRUE(model->named_parameters()["model.layers.0.self_attn.q_proj.weight"].grad().defined());
  EXPECT_TRUE(model->named_parameters()["model.layers.1.mlp.up_proj.weight"].grad().defined());
  model->set_fused_projections(false);
}

TEST(Transformer, TiedModelProjectsWithTheEmbedding) {
  auto tied = tiny_model(tiny_config(true));
  auto untied = tiny_model(tiny_config(false));
  auto state = tied->state();
  EXPECT_EQ(state.count("lm_head.weight"), 0u);
  state["lm_head.weight"] = state["model.embed_tokens.weight"].clone();
  ASSERT_TRUE(untied->load_weights(state).ok());
  auto ids = random_ids(2, 5, 50);
  EXPECT_TRUE(torch::allclose(tied->forward(ids), untied->forward(ids), 1e-12, 1e-12));
  EXPECT_TRUE(tied->output_weight().is_same(tied->model->embed_tokens->weight));
  // The embedding's gradient in the tied model is the sum of both uses.
  tied->zero_grad();
  untied->zero_grad();
  tied->forward(ids).sum().backward();
  untied->forward(ids).sum().backward();
  auto both = untied->lm_head->weight.grad() + untied->model->embed_tokens->weight.grad();
  EXPECT_TRUE(torch::allclose(tied->model->embed_tokens->weight.grad(), both, 1e-10, 1e-12));
}

TEST(Transformer, LoadWeightsRoundTripsAndNamesBadTensors) {
  const auto config = tiny_config(false, true);
  auto source = tiny_model(config, torch::kFloat64, 1);
  auto target = tiny_model(config, torch::kFloat64, 2);
  auto ids = random_ids(1, 6, 50);
  ASSERT_TRUE(target->load_weights(source->state()).ok());
  EXPECT_TRUE(torch::allclose(source->forward(ids), target->forward(ids)));

  auto fresh = tiny_model(config, torch::kFloat64, 3);
  const auto before = fresh->forward(ids);
  auto missing = source->state();
  missing.erase("model.layers.1.mlp.up_proj.weight");
  auto result = fresh->load_weights(missing);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("missing tensors: model.layers.1.mlp.up_proj.weight"), std::string::npos)
      << result.error().message;

  auto wrong = source->state();
  wrong["model.layers.0.self_attn.q_proj.bias"] = torch::zeros({31}, torch::kFloat64);
  result = fresh->load_weights(wrong);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("model.layers.0.self_attn.q_proj.bias (checkpoint [31], model [32])"),
            std::string::npos)
      << result.error().message;

  auto extra = source->state();
  extra["model.layers.2.mlp.up_proj.weight"] = torch::zeros({64, 32});
  extra["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch::zeros({4});  // tolerated
  result = fresh->load_weights(extra);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("unexpected tensors: model.layers.2.mlp.up_proj.weight"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(result.error().message.find("inv_freq"), std::string::npos);
  EXPECT_TRUE(torch::equal(fresh->forward(ids), before)) << "a failed load must change nothing";

  // float32 tensors load into a float64 model (converted); a tied model accepts a redundant lm_head.
  auto tied = tiny_model(tiny_config(true), torch::kFloat64, 4);
  auto tied_state = tiny_model(tiny_config(true), torch::kFloat32, 5)->state();
  tied_state["lm_head.weight"] = tied_state["model.embed_tokens.weight"];
  EXPECT_TRUE(tied->load_weights(tied_state).ok());
  EXPECT_EQ(tied->model->embed_tokens->weight.scalar_type(), torch::kFloat64);
}

// Logits of every position of every row, computed row by row without padding.
torch::Tensor unpadded_logits(Transformer& model, const std::vector<std::vector<std::int64_t>>& rows,
                              std::int64_t row) {
  return model->forward(torch::tensor(rows[row], torch::kInt64).unsqueeze(0)).squeeze(0);
}

TEST(Transformer, CachedDecodingEqualsFullForward) {
  torch::NoGradGuard no_grad;
  auto model = tiny_model(tiny_config(false, true));
  auto ids = random_ids(2, 10, 50);
  auto full = model->forward(ids);
  KvCache cache(model->config(), 2, 16, torch::TensorOptions().dtype(torch::kFloat64));
  // A failed forward (token id out of range) leaves the cache as it was.
  EXPECT_THROW(model->forward(torch::full({2, 3}, 50, torch::kInt64), {}, &cache), c10::Error);
  EXPECT_EQ(cache.length(), 0);
  std::vector<torch::Tensor> pieces{model->forward(ids.narrow(1, 0, 4), {}, &cache)};
  pieces.push_back(model->forward(ids.narrow(1, 4, 3), {}, &cache));  // a chunk after a prefix
  for (int t = 7; t < 10; ++t) pieces.push_back(model->forward(ids.narrow(1, t, 1), {}, &cache));
  EXPECT_EQ(cache.length(), 10);
  EXPECT_TRUE(torch::allclose(torch::cat(pieces, 1), full, 1e-10, 1e-10));
}

// Slot steps (the CUDA graph's static-shape decoding: whole-capacity attention under the key
// mask, writes at a slot given as a tensor) give ordinary decoding's logits, padded rows included.
TEST(Transformer, SlotStepsMatchOrdinaryDecoding) {
  torch::NoGradGuard no_grad;
  auto model = tiny_model(tiny_config(false, true));
  const std::int64_t width = 6, n_new = 4, capacity = width + n_new + 3;  // spare, never-written slots
  auto ids = random_ids(2, width + n_new, 50);
  auto mask = torch::ones({2, width}, torch::kInt64);
  mask.index_put_({1, torch::indexing::Slice(0, 3)}, 0);  // row 1: three left pads
  auto positions = (mask.cumsum(1) - 1).clamp_min(0);
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  KvCache ordinary(model->config(), 2, capacity, options), slotted(model->config(), 2, capacity, options);
  auto prompt = ids.narrow(1, 0, width);
  EXPECT_TRUE(torch::allclose(model->forward_last(prompt, positions, &ordinary, mask),
                              model->forward_last(prompt, positions, &slotted, mask), 1e-12, 1e-12));
  auto pos = positions.select(1, width - 1).unsqueeze(1);
  for (std::int64_t i = 0; i < n_new; ++i) {
    auto token = ids.narrow(1, width + i, 1);
    auto expected = model->forward_last(token, pos + 1 + i, &ordinary);
    auto got = model->forward_last_at(token, pos + 1 + i, slotted, torch::full({1}, width + i, torch::kInt64));
    EXPECT_TRUE(torch::allclose(got, expected, 1e-10, 1e-10)) << "step " << i;
  }
  EXPECT_EQ(slotted.length(), width);  // slot steps leave the position to the caller
  EXPECT_FALSE(slotted.in_slot_step());
  // Misuse is a c10::Error and leaves no step half begun.
  EXPECT_THROW(model->forward_last_at(ids.narrow(1, 0, 2), {}, slotted, torch::full({1}, 11, torch::kInt64)),
               c10::Error);
  EXPECT_THROW(slotted.begin_at(torch::full({1}, 11, torch::kInt32)), c10::Error);
  EXPECT_FALSE(slotted.in_slot_step());
  EXPECT_EQ(slotted.pending(), 0);
}

TEST(Transformer, LeftPaddedBatchesMatchUnpaddedRows) {
  torch::NoGradGuard no_grad;
  auto model = tiny_model(tiny_config());
  const std::vector<std::vector<std::int64_t>> rows{{5, 9, 2, 7, 1, 3}, {4, 8}, {11, 12, 13, 14}};
  const std::int64_t width = 6, extra = 3;
  auto ids = torch::zeros({3, width}, torch::kInt64);
  auto mask = torch::zeros({3, width}, torch::kInt64);
  auto positions = torch::zeros({3, width}, torch::kInt64);
  for (int r = 0; r < 3; ++r) {
    const auto len = static_cast<std::int64_t>(rows[r].size());
    for (std::int64_t i = 0; i < len; ++i) {
      ids[r][width - len + i] = rows[r][i];
      mask[r][width - len + i] = 1;
      positions[r][width - len + i] = i;
    }
  }
  // Without a cache.
  auto padded = model->forward(ids, positions, nullptr, mask);
  for (int r = 0; r < 3; ++r) {
    const auto len = static_cast<std::int64_t>(rows[r].size());
    EXPECT_TRUE(torch::allclose(padded[r].narrow(0, width - len, len), unpadded_logits(model, rows, r), 1e-10, 1e-10))
        << "row " << r;
  }
  EXPECT_FALSE(torch::isnan(padded).any().item<bool>());

  // With a cache: prefill the padded prompts, then decode 3 more tokens per row (one chunk of 2, one single).
  KvCache cache(model->config(), 3, width + extra, torch::TensorOptions().dtype(torch::kFloat64));
  auto prefill = model->forward(ids, positions, &cache, mask);
  EXPECT_TRUE(torch::allclose(prefill, padded, 1e-10, 1e-10));
  EXPECT_TRUE(torch::equal(cache.lengths(), torch::tensor({6, 2, 4}, torch::kInt64)));
  auto next = torch::tensor({20, 21, 22, 23, 24, 25}, torch::kInt64).view({3, 2});
  auto last_position = positions.select(1, width - 1).unsqueeze(1);
  auto chunk = model->forward(next, last_position + torch::arange(1, 3).unsqueeze(0), &cache);
  auto single_ids = torch::tensor({26, 27, 28}, torch::kInt64).view({3, 1});
  auto single = model->forward(single_ids, last_position + 3, &cache);
  EXPECT_EQ(cache.length(), width + extra);
  for (int r = 0; r < 3; ++r) {
    auto extended = rows;
    const auto len = static_cast<std::int64_t>(rows[r].size());
    extended[r].insert(extended[r].end(), {20 + 2 * r, 21 + 2 * r, 26 + r});
    auto reference = unpadded_logits(model, extended, r);
    EXPECT_TRUE(torch::allclose(chunk[r], reference.narrow(0, len, 2), 1e-10, 1e-10)) << "row " << r;
    EXPECT_TRUE(torch::allclose(single[r][0], reference[len + 2], 1e-10, 1e-10)) << "row " << r;
  }
}

TEST(Transformer, Bfloat16AndAutocastStayCloseToFloat32) {
  auto model = tiny_model(tiny_config(), torch::kFloat32);
  auto ids = random_ids(2, 6, 50);
  auto targets = random_ids(2, 6, 50, 4);
  auto reference = model->forward(ids).detach();
  {
    AutocastScope autocast(torch::kCPU, torch::kBFloat16);
    EXPECT_TRUE(autocast_enabled(torch::kCPU));
    auto logits = model->forward(ids);
    EXPECT_EQ(logits.scalar_type(), torch::kBFloat16);
    EXPECT_LT((logits.to(torch::kFloat32) - reference).abs().max().item<double>(), 0.2);
    // Training under autocast: float32 weights get float32 gradients, checkpointed or not.
    model->set_activation_checkpointing(true);
    model->token_logprobs(ids, targets, {}, {2048, true, 1.0}).logprobs.sum().backward();
  }
  EXPECT_FALSE(autocast_enabled(torch::kCPU));
  auto grad = model->named_parameters()["model.layers.0.mlp.gate_proj.weight"].grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_EQ(grad.scalar_type(), torch::kFloat32);
  EXPECT_FALSE(torch::isnan(grad).any().item<bool>());

  model->to(torch::kBFloat16);
  torch::NoGradGuard no_grad;
  auto logits = model->forward(ids);
  EXPECT_EQ(logits.scalar_type(), torch::kBFloat16);
  EXPECT_LT((logits.to(torch::kFloat32) - reference).abs().max().item<double>(), 0.3);
}

}  // namespace
}  // namespace kernelrl::model
