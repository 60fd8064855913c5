// The policy's tokenizer read from the default model's GGUF metadata gives Hugging Face's ids on
// the tokenizer golden corpus (tests/data/tokenizer, made by scripts/make_tokenizer_golden.py), and
// its chat template renders prompts as the shipped tokenizer.json's does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "policy/policy_model.hpp"

namespace kernelrl::policy {
namespace {

const std::filesystem::path kSource = KERNELRL_SOURCE_DIR;
const std::filesystem::path kModel = kSource / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";

TEST(PolicyModel, GgufTokenizerMatchesHuggingFaceOnTheGoldenCorpus) {
  ASSERT_TRUE(std::filesystem::exists(kModel)) << kModel << " is missing: run scripts/fetch-default-model.sh";
  auto gguf = load_tokenizer(kModel);
  ASSERT_TRUE(gguf) << gguf.error().message;
  std::ifstream in(kSource / "tests/data/tokenizer/encode_golden.jsonl");
  ASSERT_TRUE(in);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    const auto want = j["ids"]["smollm"].get<std::vector<std::int32_t>>();  // the GGUF says pre = smollm
    const auto got = gguf->tokenizer.encode(j["text"].get<std::string>());
    EXPECT_EQ(got, want) << j["name"];
    ++n;
  }
  EXPECT_GE(n, 50);

  auto json_side = load_tokenizer(kSource / "tests/data/tokenizer/smollm2");
  ASSERT_TRUE(json_side) << json_side.error().message;
  const std::vector<tokenizer::ChatMessage> chat{{"user", "Write a CUDA kernel for ReLU."}};
  EXPECT_EQ(gguf->chat.render(chat, true), json_side->chat.render(chat, true));
  EXPECT_EQ(gguf->chat.end_of_turn(), "<|im_end|>");
}

TEST(PolicyModel, ErrorsNameTheFile) {
  auto missing = load_tokenizer("/nonexistent/model.gguf");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/model.gguf"), std::string::npos) << missing.error().message;
  auto bad_device = load_policy_model(kModel, {}, "tpu");
  ASSERT_FALSE(bad_device);
  EXPECT_NE(bad_device.error().message.find("tpu"), std::string::npos);
}

}  // namespace
}  // namespace kernelrl::policy
