// Shared fixtures of the tokenizer tests: the golden files made by scripts/make_tokenizer_golden.py
// (tests/data/tokenizer/) and the SmolLM2 tokenizer built both ways. A missing file fails the test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.hpp"

namespace kernelrl::tokenizer::test {

inline std::filesystem::path data_dir() { return std::filesystem::path(KERNELRL_SOURCE_DIR) / "tests/data/tokenizer"; }
inline std::filesystem::path smollm2_json() { return data_dir() / "smollm2" / "tokenizer.json"; }

// Every line of a JSONL file; fails the calling test (ADD_FAILURE) when it is missing.
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path);
nlohmann::json read_json(const std::filesystem::path& path);

// The GGUF-style spec of SmolLM2 (tokens, merges, token types 3 for special tokens), as the
// tokenizer.json the golden script converted from the GGUF carries it, with `pre` = pre_name.
TokenizerSpec smollm2_spec(const std::string& pre_name);

// Built once per process; a load failure fails the test with the error message.
const Tokenizer& smollm2_from_json();
const Tokenizer& smollm2_from_spec(const std::string& pre_name);

// "" when equal, else the first differing position and both lists.
std::string compare_ids(const std::vector<int32_t>& expected, const std::vector<int32_t>& actual);

}  // namespace kernelrl::tokenizer::test
