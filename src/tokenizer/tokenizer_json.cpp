// Tokenizer::from_tokenizer_json: reads a Hugging Face tokenizer.json (and tokenizer_config.json /
// chat_template.jinja beside it) into TokenizerParts. Anything that would change ids and is not
// implemented (a normalizer, BPE dropout, byte fallback, a non-ByteLevel decoder, other
// pre-tokenizers) is an error naming the component, never silently ignored.
#include "tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include "common/fs.hpp"
#include "tokenizer/tokenizer_parts.hpp"

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Errors about one file, each prefixed "FILE: field `NAME`".
struct Where {
  std::string file;
  common::Error at(const std::string& field, const std::string& problem) const {
    return make_error(file + ": field `" + field + "` " + problem);
  }
};

Expected<json> parse_json_file(const fs::path& path) {
  auto text = common::read_file(path, 256ull << 20);
  if (!text) return text.error();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(path.string() + ": not valid JSON");
  if (!j.is_object()) return make_error(path.string() + ": the top level is not a JSON object");
  return j;
}

// j[name] when j is an object holding it, else null (nlohmann's value() throws on a non-object).
const json& member(const json& j, const char* name) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(name);
  return it == j.end() ? null_value : *it;
}

std::string string_field(const json& j, const char* name) {
  const json& v = member(j, name);
  return v.is_string() ? v.get<std::string>() : std::string();
}

bool bool_field(const json& j, const char* name, bool fallback) {
  return j.contains(name) && j[name].is_boolean() ? j[name].get<bool>() : fallback;
}

std::string type_of(const json& j) {
  return string_field(j, "type");
}

Expected<PreTokenizerStep> read_split(const json& j, const std::string& field, const Where& where) {
  const json& pattern = member(j, "pattern");
  auto behavior = parse_split_behavior(string_field(j, "behavior"));
  if (!behavior) return where.at(field + ".behavior", behavior.error().message);
  const bool invert = bool_field(j, "invert", false);
  Expected<SplitStep> step = make_error("");
  if (member(pattern, "Regex").is_string()) {
    step = make_split_regex(string_field(pattern, "Regex"), *behavior, invert);
  } else if (member(pattern, "String").is_string()) {
    step = make_split_string(string_field(pattern, "String"), *behavior, invert);
  } else {
    return where.at(field + ".pattern", "is neither {\"Regex\": ...} nor {\"String\": ...}");
  }
  if (!step) return where.at(field + ".pattern", step.error().message);
  return PreTokenizerStep(std::move(*step));
}

// Appends the steps of one pre-tokenizer (recursing into Sequence).
common::Fallible read_pre_tokenizer(const json& j, const std::string& field, const Where& where,
                                    std::vector<PreTokenizerStep>& steps) {
  const std::string type = type_of(j);
  if (type == "Sequence") {
    const json& list = member(j, "pretokenizers");
    if (!list.is_array()) return where.at(field + ".pretokenizers", "is not an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto ok = read_pre_tokenizer(list[i], field + ".pretokenizers[" + std::to_string(i) + "]", where, steps);
      if (!ok) return ok;
    }
  } else if (type == "ByteLevel") {
    steps.push_back(ByteLevelStep{bool_field(j, "add_prefix_space", false), bool_field(j, "use_regex", true)});
  } else if (type == "Split") {
    auto step = read_split(j, field, where);
    if (!step) return step.error();
    steps.push_back(std::move(*step));
  } else if (type == "Digits") {
    auto step = make_digits(bool_field(j, "individual_digits", false));
    if (!step) return where.at(field, step.error().message);
    steps.push_back(std::move(*step));
  } else {
    return where.at(field, "has pre-tokenizer type `" + (type.empty() ? j.dump() : type) +
                               "`, which is not supported (supported: Sequence, ByteLevel, Split, Digits)");
  }
  return common::Ok{};
}

// The components that must be absent or byte-level: normalizer and decoder.
common::Fallible check_normalizer_and_decoder(const json& root, const Where& where) {
  const json& normalizer = member(root, "normalizer");
  const bool empty_sequence = type_of(normalizer) == "Sequence" && member(normalizer, "normalizers").empty();
  if (!normalizer.is_null() && !empty_sequence) {
    return where.at("normalizer", "has type `" + type_of(normalizer) + "`; normalizers are not supported");
  }
  const json& decoder = member(root, "decoder");
  if (type_of(decoder) != "ByteLevel") {
    return where.at("decoder", "has type `" + (decoder.is_null() ? std::string("null") : type_of(decoder)) +
                                   "`; only the ByteLevel decoder is supported");
  }
  return common::Ok{};
}

common::Fallible read_model(const json& model, const Where& where, TokenizerParts& parts) {
  if (!model.is_object()) return where.at("model", "is missing or not an object");
  if (model.contains("type") && type_of(model) != "BPE") {
    return where.at("model.type", "is `" + type_of(model) + "`; only BPE is supported");
  }
  if (!member(model, "dropout").is_null()) return where.at("model.dropout", "is set; BPE dropout is not supported");
  if (bool_field(model, "byte_fallback", false)) return where.at("model.byte_fallback", "is true; not supported");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json& value = member(model, affix);
    if (!value.is_null() && !(value.is_string() && value.get<std::string>().empty())) {
      return where.at(std::string("model.") + affix, "is set; not supported");
    }
  }
  const json& vocab = member(model, "vocab");
  if (!vocab.is_object() || vocab.empty()) return where.at("model.vocab", "is missing or not a non-empty object");
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 24)) {
      return where.at("model.vocab[\"" + token + "\"]", "is not an id in 0 .. 2^24");
    }
    const auto index = static_cast<std::size_t>(id.get<int64_t>());
    if (index >= parts.tokens.size()) parts.tokens.resize(index + 1);
    parts.tokens[index] = token;
  }
  const json& merges = member(model, "merges");
  if (!merges.is_array()) return where.at("model.merges", "is missing or not an array");
  parts.merges.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    const std::string field = "model.merges[" + std::to_string(i) + "]";
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      parts.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      continue;
    }
    const std::string text = m.is_string() ? m.get<std::string>() : "";
    const std::size_t space = text.find(' ');
    if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
      return where.at(field, "is neither \"left right\" nor [\"left\", \"right\"]: " + m.dump());
    }
    parts.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
  }
  parts.bpe_options.ignore_merges = bool_field(model, "ignore_merges", false);
  parts.bpe_options.fuse_unk = bool_field(model, "fuse_unk", false);
  if (member(model, "unk_token").is_string()) {
    const std::string unk = string_field(model, "unk_token");
    auto it = vocab.find(unk);
    if (it == vocab.end()) return where.at("model.unk_token", "`" + unk + "` is not in the vocabulary");
    parts.bpe_options.unk_id = it->get<int32_t>();
  }
  return common::Ok{};
}

common::Fallible read_added_tokens(const json& list, const Where& where, TokenizerParts& parts) {
  if (list.is_null()) return common::Ok{};
  if (!list.is_array()) return where.at("added_tokens", "is not an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    const std::string field = "added_tokens[" + std::to_string(i) + "]";
    if (!member(t, "id").is_number_integer() || !member(t, "content").is_string()) {
      return where.at(field, "needs an integer `id` and a string `content`");
    }
    if (bool_field(t, "single_word", false)) return where.at(field + ".single_word", "is true; not supported");
    parts.added_tokens.push_back({string_field(t, "content"), member(t, "id").get<int32_t>(), bool_field(t, "special", false),
                                  bool_field(t, "lstrip", false), bool_field(t, "rstrip", false),
                                  bool_field(t, "normalized", false)});
  }
  return common::Ok{};
}

// The id of a special token named in tokenizer_config.json ("<|im_end|>" or {"content": ...}).
Expected<int64_t> config_token_id(const json& config, const char* name, const TokenizerParts& parts,
                                  const Where& where) {
  const json& value = member(config, name);
  if (value.is_null()) return int64_t{-1};
  std::string content;
  if (value.is_string()) {
    content = value.get<std::string>();
  } else if (member(value, "content").is_string()) {
    content = string_field(value, "content");
  } else {
    return where.at(name, "is neither a string nor {\"content\": ...}");
  }
  for (const AddedToken& t : parts.added_tokens) {
    if (t.content == content) return int64_t{t.id};
  }
  for (std::size_t id = 0; id < parts.tokens.size(); ++id) {
    if (parts.tokens[id] == content) return static_cast<int64_t>(id);
  }
  return where.at(name, "names `" + content + "`, which is not in the vocabulary");
}

// Whether a TemplateProcessing post-processor (alone or in a Sequence) starts a single sequence
// with a special token, as Llama 3's adds <|begin_of_text|>.
bool post_processor_adds_bos(const json& post) {
  if (type_of(post) == "Sequence") {
    for (const json& p : member(post, "processors")) {
      if (post_processor_adds_bos(p)) return true;
    }
    return false;
  }
  const json& single = member(post, "single");
  return type_of(post) == "TemplateProcessing" && single.is_array() && !single.empty() &&
         member(single[0], "SpecialToken").is_object();
}

// bos/eos/pad, add_bos_token and the chat template from tokenizer_config.json and chat_template.jinja, if present.
common::Fallible read_config(const fs::path& dir, TokenizerParts& parts) {
  const fs::path config_path = dir / "tokenizer_config.json";
  std::error_code ec;
  if (fs::exists(config_path, ec)) {
    auto config = parse_json_file(config_path);
    if (!config) return config.error();
    const Where where{config_path.string()};
    for (auto [name, target] : {std::pair{"bos_token", &parts.bos_id}, {"eos_token", &parts.eos_id},
                                {"pad_token", &parts.pad_id}}) {
      auto id = config_token_id(*config, name, parts, where);
      if (!id) return id.error();
      *target = *id;
    }
    if (member(*config, "add_bos_token").is_boolean()) parts.add_bos = member(*config, "add_bos_token").get<bool>();
    const json& chat = member(*config, "chat_template");
    if (chat.is_string()) {
      parts.chat_template = chat.get<std::string>();
    } else if (chat.is_array()) {  // named templates: [{"name": "default", "template": ...}, ...]
      for (const json& named : chat) {
        if (string_field(named, "name") == "default" && member(named, "template").is_string()) {
          parts.chat_template = string_field(named, "template");
        }
      }
    }
  }
  const fs::path jinja_path = dir / "chat_template.jinja";
  if (fs::exists(jinja_path, ec)) {  // transformers >= 4.50 saves the template here; it takes precedence
    auto text = common::read_file(jinja_path);
    if (!text) return text.error();
    parts.chat_template = std::move(*text);
  }
  return common::Ok{};
}

}  // namespace

Expected<Tokenizer> Tokenizer::from_tokenizer_json(const fs::path& path) {
  auto root = parse_json_file(path);
  if (!root) return root.error();
  const Where where{path.string()};
  TokenizerParts parts;
  parts.source = path.string();
  if (auto ok = check_normalizer_and_decoder(*root, where); !ok) return ok.error();
  if (auto ok = read_model(member(*root, "model"), where, parts); !ok) return ok.error();
  const json& pre = member(*root, "pre_tokenizer");
  if (pre.is_null()) return where.at("pre_tokenizer", "is null; a ByteLevel pre-tokenizer is needed");
  if (auto ok = read_pre_tokenizer(pre, "pre_tokenizer", where, parts.pre_steps); !ok) return ok.error();
  if (auto ok = read_added_tokens(member(*root, "added_tokens"), where, parts); !ok) return ok.error();
  parts.add_bos = post_processor_adds_bos(member(*root, "post_processor"));
  if (auto ok = read_config(path.parent_path(), parts); !ok) return ok.error();
  return build(std::move(parts));
}

}  // namespace kernelrl::tokenizer
