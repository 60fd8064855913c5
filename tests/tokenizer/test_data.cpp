// Loading of the golden files and the SmolLM2 tokenizers shared by the tokenizer tests.
#include "test_data.hpp"

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

namespace kernelrl::tokenizer::test {

using nlohmann::json;

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "golden file " << path
                  << " is missing: run scripts/make_tokenizer_golden.py (see its header for the venv)";
    return "";
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string join(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

}  // namespace

std::vector<json> read_jsonl(const std::filesystem::path& path) {
  std::vector<json> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  return lines;
}

json read_json(const std::filesystem::path& path) {
  const std::string text = read_text(path);
  return text.empty() ? json::object() : json::parse(text);
}

TokenizerSpec smollm2_spec(const std::string& pre_name) {
  const json j = read_json(smollm2_json());
  TokenizerSpec spec;
  if (!j.contains("model")) return spec;
  const json& vocab = j["model"]["vocab"];
  spec.tokens.resize(vocab.size());
  for (const auto& [token, id] : vocab.items()) spec.tokens.at(id.get<std::size_t>()) = token;
  for (const json& m : j["model"]["merges"]) {
    spec.merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
  }
  spec.token_types.assign(spec.tokens.size(), 1);
  for (const json& t : j["added_tokens"]) {
    if (t["special"].get<bool>()) spec.token_types.at(t["id"].get<std::size_t>()) = 3;
  }
  spec.pre_tokenizer = pre_name;
  spec.bos_id = 1;  // the GGUF's tokenizer.ggml.bos_token_id, eos_token_id, padding_token_id
  spec.eos_id = 2;
  spec.pad_id = 2;
  spec.chat_template = read_json(data_dir() / "chat_golden.json")["templates"].value("smollm2", "");
  return spec;
}

const Tokenizer& smollm2_from_json() {
  static const auto tokenizer = [] {
    auto t = Tokenizer::from_tokenizer_json(smollm2_json());
    if (!t) ADD_FAILURE() << t.error().message;
    return t ? std::make_unique<Tokenizer>(*t) : nullptr;
  }();
  if (!tokenizer) throw std::runtime_error("the SmolLM2 tokenizer.json did not load (see the failure above)");
  return *tokenizer;
}

const Tokenizer& smollm2_from_spec(const std::string& pre_name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Tokenizer>> built;
  std::lock_guard lock(mutex);
  auto& slot = built[pre_name];
  if (!slot) {
    auto t = Tokenizer::from_spec(smollm2_spec(pre_name));
    if (!t) {
      ADD_FAILURE() << t.error().message;
      throw std::runtime_error("TokenizerSpec `" + pre_name + "` did not build (see the failure above)");
    }
    slot = std::make_unique<Tokenizer>(*t);
  }
  return *slot;
}

std::string compare_ids(const std::vector<int32_t>& expected, const std::vector<int32_t>& actual) {
  if (expected == actual) return "";
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  return "first difference at position " + std::to_string(i) + " (expected " +
         (i < expected.size() ? std::to_string(expected[i]) : "end") + ", got " +
         (i < actual.size() ? std::to_string(actual[i]) : "end") + ")\n  expected (" +
         std::to_string(expected.size()) + " ids): " + join(expected) + "\n  actual   (" +
         std::to_string(actual.size()) + " ids): " + join(actual);
}

}  // namespace kernelrl::tokenizer::test
