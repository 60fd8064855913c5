// Tokenizer assembly (from_spec maps GGUF metadata the way transformers' GGUF converter does) and
// the encode pipeline of Hugging Face tokenizers: added tokens first, then the pre-tokenizer on
// each plain segment, then BPE on each piece.
#include "tokenizer/tokenizer.hpp"

#include <algorithm>
#include <unordered_map>

#include "tokenizer/byte_level.hpp"
#include "tokenizer/tokenizer_parts.hpp"
#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;

namespace {

constexpr int32_t kTokenTypeControl = 3;      // llama.cpp LLAMA_TOKEN_TYPE_CONTROL
constexpr int32_t kTokenTypeUserDefined = 4;  // LLAMA_TOKEN_TYPE_USER_DEFINED

const std::string kEmpty;

}  // namespace

struct Tokenizer::Data {
  BpeModel bpe;
  PreTokenizer pre_tokenizer;
  AddedTokenMatcher added;
  std::vector<std::string> tokens;        // spelled, by id (model vocabulary and added tokens)
  std::vector<std::string> token_bytes;   // raw bytes, by id
  std::vector<bool> special;              // by id
  std::unordered_map<std::string, int32_t> added_ids;  // added token content -> id
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t pad_id = -1;
  bool add_bos = false;
  std::string chat_template;
};

Expected<Tokenizer> Tokenizer::build(TokenizerParts parts) {
  PreTokenizer pre_tokenizer(std::move(parts.pre_steps));
  if (!pre_tokenizer.has_byte_level()) {
    return make_error(parts.source + ": the pre-tokenizer has no ByteLevel step; only byte-level BPE is supported");
  }
  auto bpe = BpeModel::build(parts.tokens, parts.merges, parts.bpe_options);
  if (!bpe) return make_error(parts.source + ": " + bpe.error().message);

  // Added token ids as tokenizers assigns them (the ids a file states are not used): an earlier
  // added token with the same content, else the vocabulary's id, else the next id past both.
  std::vector<std::string> tokens = std::move(parts.tokens);
  std::vector<bool> special(tokens.size(), false);
  std::unordered_map<std::string, int32_t> added_ids;
  const auto n_vocab = static_cast<int32_t>(bpe->n_entries());
  int32_t max_added = -1;
  for (AddedToken& t : parts.added_tokens) {
    if (auto it = added_ids.find(t.content); it != added_ids.end()) {
      t.id = it->second;
    } else if (const int32_t id = bpe->find(t.content); id >= 0) {
      t.id = id;
    } else {
      t.id = max_added >= n_vocab ? max_added + 1 : n_vocab;
    }
    max_added = std::max(max_added, t.id);
    added_ids.emplace(t.content, t.id);
    if (static_cast<std::size_t>(t.id) >= tokens.size()) {
      tokens.resize(t.id + 1);
      special.resize(t.id + 1, false);
    }
    tokens[t.id] = t.content;
    special[t.id] = t.special;
  }
  auto added = AddedTokenMatcher::build(std::move(parts.added_tokens));
  if (!added) return make_error(parts.source + ": " + added.error().message);

  const auto vocab_size = static_cast<int64_t>(tokens.size());
  for (const auto& [name, id] : {std::pair{"bos", parts.bos_id}, {"eos", parts.eos_id}, {"pad", parts.pad_id}}) {
    if (id < -1 || id >= vocab_size) {
      return make_error(parts.source + ": " + name + " id " + std::to_string(id) + " is outside the vocabulary (" +
                        std::to_string(vocab_size) + " tokens)");
    }
  }

  auto data = std::make_shared<Data>(Data{std::move(*bpe), std::move(pre_tokenizer), std::move(*added), {}, {},
                                          std::move(special), std::move(added_ids),
                                          static_cast<int32_t>(parts.bos_id), static_cast<int32_t>(parts.eos_id),
                                          static_cast<int32_t>(parts.pad_id), parts.add_bos,
                                          std::move(parts.chat_template)});
  data->token_bytes.reserve(tokens.size());
  for (const std::string& token : tokens) {
    // A token outside the byte alphabet stands for its own UTF-8 (tokenizers' ByteLevel decoder).
    data->token_bytes.push_back(byte_level::unspell(token).value_or(token));
  }
  data->tokens = std::move(tokens);
  Tokenizer tokenizer;
  tokenizer.data_ = std::move(data);
  return tokenizer;
}

Expected<Tokenizer> Tokenizer::from_spec(TokenizerSpec spec) {
  if (spec.pre_tokenizer.empty()) spec.pre_tokenizer = "default";
  const std::string source = "TokenizerSpec (pre `" + spec.pre_tokenizer + "`)";
  if (spec.model != "gpt2") {
    return make_error("TokenizerSpec: tokenizer.ggml.model `" + spec.model +
                      "` is not supported (only `gpt2`, byte-level BPE)");
  }
  auto preset = gguf_pre_preset(spec.pre_tokenizer);
  if (!preset) return preset.error();
  if (spec.tokens.empty()) return make_error(source + ": the vocabulary (tokens) is empty");
  if (!spec.token_types.empty() && spec.token_types.size() != spec.tokens.size()) {
    return make_error(source + ": " + std::to_string(spec.token_types.size()) + " token_types for " +
                      std::to_string(spec.tokens.size()) + " tokens");
  }

  TokenizerParts parts;
  parts.source = source;
  parts.bpe_options.ignore_merges = preset->ignore_merges;
  parts.pre_steps = std::move(preset->steps);
  // As transformers' GGUF converter: control tokens spelled in the byte alphabet become special
  // added tokens, user-defined ones plain added tokens; a token outside the alphabet is respelled.
  parts.tokens.reserve(spec.tokens.size());
  for (std::size_t id = 0; id < spec.tokens.size(); ++id) {
    const std::string& token = spec.tokens[id];
    const bool in_alphabet = byte_level::unspell(token).has_value();
    parts.tokens.push_back(in_alphabet ? token : byte_level::spell(token));
    const int32_t type = spec.token_types.empty() ? 1 : spec.token_types[id];
    if (in_alphabet && (type == kTokenTypeControl || type == kTokenTypeUserDefined)) {
      parts.added_tokens.push_back({token, static_cast<int32_t>(id), type == kTokenTypeControl, false, false, false});
    }
  }
  parts.merges.reserve(spec.merges.size());
  for (std::size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const std::string& merge = spec.merges[rank];
    const std::size_t space = merge.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == merge.size() ||
        merge.find(' ', space + 1) != std::string::npos) {
      return make_error(source + ": merge " + std::to_string(rank) + " `" + merge +
                        "` is not two tokens separated by one space");
    }
    parts.merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
  }
  parts.bos_id = spec.bos_id;
  parts.eos_id = spec.eos_id;
  parts.pad_id = spec.pad_id;
  parts.add_bos = spec.add_bos;
  parts.chat_template = std::move(spec.chat_template);
  return build(std::move(parts));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool allow_special) const {
  std::string repaired;
  if (!utf8::is_valid(text)) {
    repaired = utf8::to_valid_lossy(text);
    text = repaired;
  }
  thread_local std::vector<Segment> segments;
  thread_local PreTokenized pre;
  segments.clear();
  data_->added.segment(text, allow_special, segments);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  for (const Segment& s : segments) {
    if (s.added_id >= 0) {
      ids.push_back(s.added_id);
      continue;
    }
    pre.pieces.clear();
    pre.storage.clear();
    data_->pre_tokenizer.split(text.substr(s.begin, s.end - s.begin), pre);
    for (std::string_view piece : pre.pieces) data_->bpe.encode_piece(piece, ids);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special && data_->special[id]) continue;
    bytes += data_->token_bytes[id];
  }
  return utf8::is_valid(bytes) ? bytes : utf8::to_valid_lossy(bytes);
}

const std::string& Tokenizer::token_bytes(int32_t id) const {
  return id >= 0 && id < vocab_size() ? data_->token_bytes[id] : kEmpty;
}

const std::string& Tokenizer::id_to_token(int32_t id) const {
  return id >= 0 && id < vocab_size() ? data_->tokens[id] : kEmpty;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto it = data_->added_ids.find(std::string(token)); it != data_->added_ids.end()) return it->second;
  const int32_t id = data_->bpe.find(token);
  return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
}

bool Tokenizer::is_special(int32_t id) const { return id >= 0 && id < vocab_size() && data_->special[id]; }
int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(data_->tokens.size()); }
int32_t Tokenizer::bos_id() const { return data_->bos_id; }
int32_t Tokenizer::eos_id() const { return data_->eos_id; }
int32_t Tokenizer::pad_id() const { return data_->pad_id; }
bool Tokenizer::add_bos() const { return data_->add_bos; }
const std::string& Tokenizer::chat_template() const { return data_->chat_template; }

}  // namespace kernelrl::tokenizer
