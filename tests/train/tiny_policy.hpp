// The trainer tests' policy: a tiny random model of SmolLM2's vocabulary (the shipped SmolLM2
// tokenizer, tests/data/tokenizer/smollm2, fits it) saved as a Hugging Face folder, so a training
// run on the CPU takes seconds. It writes noise: nothing it samples is meant to be right.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>

#include <torch/torch.h>

#include "../model/model_test_util.hpp"
#include "model/transformer.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train::testing {

// Writes the model (weights drawn from `seed`) to `dir` and returns `dir`; failures fail the test.
inline std::filesystem::path tiny_checkpoint(const std::filesystem::path& dir, std::uint64_t seed = 3,
                                             std::int64_t max_position = 8192) {
  auto c = model::testing::tiny_config(/*tied=*/true);
  c.vocab_size = 49152;  // SmolLM2's tokenizer
  c.max_position = max_position;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  torch::manual_seed(seed);
  auto m = model::make_transformer(c);
  EXPECT_TRUE(m) << m.error().message;
  auto saved = weights::save_hf_checkpoint(dir, c, (*m)->state(), "float32");
  EXPECT_TRUE(saved) << saved.error().message;
  return dir;
}

// The tokenizer of the tiny model's vocabulary: SmolLM2's.
inline std::filesystem::path tiny_tokenizer() {
  return std::filesystem::path(KERNELRL_SOURCE_DIR) / "tests/data/tokenizer/smollm2";
}

}  // namespace kernelrl::train::testing
