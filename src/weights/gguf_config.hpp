// The ModelConfig a GGUF file describes through its `<arch>.*` metadata (llama.cpp's keys).
#pragma once

#include "common/expected.hpp"
#include "weights/gguf.hpp"
#include "weights/model_config.hpp"

namespace kernelrl::weights {

// general.architecture (llama or qwen2); <arch>.block_count, .embedding_length,
// .feed_forward_length, .attention.head_count, .attention.head_count_kv (default: head_count),
// .rope.freq_base (default 10000), .attention.layer_norm_rms_epsilon, .context_length;
// head_dim from .attention.key_length or .rope.dimension_count (default embedding / heads);
// vocab_size from token_embd.weight's rows (and <arch>.vocab_size, which must agree);
// tied when there is no output.weight; bos/eos from tokenizer.ggml.{bos,eos}_token_id.
// The result is validated; errors name the file and the key.
common::Expected<ModelConfig> config_from_gguf(const GgufFile& file);

}  // namespace kernelrl::weights
