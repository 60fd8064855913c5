// The tensors of a Llama / Qwen2 checkpoint under Hugging Face's names, the llama.cpp (GGUF) names
// they correspond to, and the row permutation llama.cpp's converter applies to Llama's Q and K.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::weights {

// Every tensor a checkpoint of `config` holds, HF name -> row-major shape: model.embed_tokens.weight,
// model.layers.{i}.self_attn.{q,k,v,o}_proj.weight (+ q/k/v .bias when attention_bias),
// model.layers.{i}.mlp.{gate,up,down}_proj.weight, model.layers.{i}.{input,post_attention}_layernorm.weight,
// model.norm.weight, and lm_head.weight unless the embeddings are tied.
std::map<std::string, std::vector<std::int64_t>> hf_tensor_shapes(const ModelConfig& config);

// The HF name of a llama.cpp tensor (token_embd.weight -> model.embed_tokens.weight,
// blk.3.attn_q.weight -> model.layers.3.self_attn.q_proj.weight, ...), or an error naming it.
common::Expected<std::string> gguf_to_hf_name(const std::string& gguf_name);

// The llama.cpp name of a HF tensor (the inverse of gguf_to_hf_name).
common::Expected<std::string> hf_to_gguf_name(const std::string& hf_name);

// Undoes llama.cpp's `permute` on a [rows, cols] row-major matrix (or a bias: cols = 1) in place.
// The converter maps HF's rotate-half row order to an interleaved one:
//   gguf = hf.reshape(n_head, 2, rows/n_head/2, cols).swapaxes(1, 2).reshape(rows, cols)
// so gguf row h*D + 2*j + t holds hf row h*D + t*D/2 + j (D = rows / n_head). n_head is the query
// head count for Q and the key/value head count for K. Requires rows % (2 * n_head) == 0.
void unpermute_rows(std::span<float> data, std::int64_t rows, std::int64_t cols, std::int64_t n_head);

// The converter's permutation itself (HF -> GGUF order), for writing GGUFs and for tests.
void permute_rows(std::span<float> data, std::int64_t rows, std::int64_t cols, std::int64_t n_head);

}  // namespace kernelrl::weights
