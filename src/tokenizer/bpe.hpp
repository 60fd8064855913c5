// The byte-level BPE model: a vocabulary of byte strings and ranked merges of id pairs, applied to
// one pre-tokenized piece the way Hugging Face tokenizers' BPE does (lowest rank first, leftmost on
// ties), with a thread-safe cache of recent pieces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.hpp"

namespace kernelrl::tokenizer {

struct BpeOptions {
  bool ignore_merges = false;  // a piece that is itself a vocabulary entry is emitted whole (Llama 3)
  int32_t unk_id = -1;         // id for bytes missing from the vocabulary; -1 drops them (tokenizers)
  bool fuse_unk = false;       // consecutive unknown bytes become one unk_id
};

class BpeModel {
 public:
  // `tokens[id]` is each token spelled in the byte-level alphabet (as tokenizer.json and GGUF
  // store them); an empty string leaves the id unused. `merges[rank]` pairs two spelled tokens
  // whose concatenation must also be a token. Errors name the merge and the missing token.
  static common::Expected<BpeModel> build(const std::vector<std::string>& tokens,
                                          const std::vector<std::pair<std::string, std::string>>& merges,
                                          const BpeOptions& options);

  // Appends the ids of one piece of raw bytes to `out`. Thread-safe.
  void encode_piece(std::string_view bytes, std::vector<int32_t>& out) const;

  // The id of a spelled token, or -1.
  int32_t find(std::string_view spelled) const;

  std::size_t n_merges() const;
  std::size_t n_entries() const;  // distinct vocabulary strings (tokenizers' get_vocab_size)

  BpeModel(BpeModel&&) noexcept;
  BpeModel& operator=(BpeModel&&) noexcept;
  ~BpeModel();

 private:
  BpeModel();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kernelrl::tokenizer
