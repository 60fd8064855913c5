// Chat templates: renders equal transformers' apply_chat_template text for SmolLM2's template (from
// the GGUF, raw newlines in its literals) and Qwen2's (escaped \n); the default system message;
// the end-of-turn token; unrecognised templates.
#include <gtest/gtest.h>

#include "test_data.hpp"
#include "tokenizer/chat_template.hpp"

namespace kernelrl::tokenizer {
namespace {

using nlohmann::json;

const json& chats() {
  static const json j = test::read_json(test::data_dir() / "chat_golden.json");
  return j;
}

std::vector<ChatMessage> messages_of(const json& list) {
  std::vector<ChatMessage> messages;
  for (const json& m : list) messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  return messages;
}

TEST(TokenizerChatTemplate, RendersLikeHuggingFace) {
  ASSERT_TRUE(chats().contains("renders"));
  std::size_t n_checked = 0;
  for (const json& r : chats()["renders"]) {
    const std::string name = r["template"];
    auto chat = ChatTemplate::from_jinja(chats()["templates"][name].get<std::string>());
    ASSERT_TRUE(chat) << chat.error().message;
    EXPECT_EQ(chat->render(messages_of(r["messages"]), r["add_generation_prompt"].get<bool>()),
              r["text"].get<std::string>())
        << name << "/" << r["name"];
    ++n_checked;
  }
  EXPECT_GE(n_checked, 8u);
}

TEST(TokenizerChatTemplate, DefaultSystemMessages) {
  auto smollm = ChatTemplate::from_jinja(chats()["templates"]["smollm2"].get<std::string>());
  ASSERT_TRUE(smollm) << smollm.error().message;
  EXPECT_EQ(smollm->family(), ChatTemplateFamily::CHATML);
  EXPECT_EQ(smollm->default_system(), "You are a helpful AI assistant named SmolLM, trained by Hugging Face");
  auto qwen = ChatTemplate::from_jinja(chats()["templates"]["qwen2"].get<std::string>());
  ASSERT_TRUE(qwen) << qwen.error().message;
  EXPECT_EQ(qwen->default_system(), "You are a helpful assistant.");
  // A ChatML template without a default system message inserts none.
  auto plain = ChatTemplate::from_jinja(
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
      "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->default_system(), "");
  const std::vector<ChatMessage> user{{"user", "hi"}};
  EXPECT_EQ(plain->render(user, true), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(smollm->render({}, true), "<|im_start|>assistant\n");
}

TEST(TokenizerChatTemplate, SystemLiteralThatIsNotWholeIsNoDefault) {
  // '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>': the text is not one literal.
  auto chat = ChatTemplate::from_jinja(
      "{{ '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}");
  ASSERT_TRUE(chat) << chat.error().message;
  EXPECT_EQ(chat->default_system(), "");
  EXPECT_EQ(unescape_jinja_string(R"(a\nb\'c\\d)"), "a\nb'c\\d");
}

TEST(TokenizerChatTemplate, EndOfTurn) {
  auto chat = ChatTemplate::from_jinja(chats()["templates"]["smollm2"].get<std::string>());
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->end_of_turn(), "<|im_end|>");
  auto id = chat->end_of_turn_id(test::smollm2_from_json());
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, 2);  // also the GGUF's eos
  EXPECT_EQ(*id, test::smollm2_from_json().eos_id());
}

TEST(TokenizerChatTemplate, UnrecognisedTemplateQuotesItsStart) {
  const std::string llama3 =
      "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' %}"
      "{{ content }}{% endfor %}";
  auto chat = ChatTemplate::from_jinja(llama3);
  ASSERT_FALSE(chat);
  EXPECT_NE(chat.error().message.find("unrecognised chat template"), std::string::npos) << chat.error().message;
  EXPECT_NE(chat.error().message.find("{% set loop_messages = messages %}"), std::string::npos) << chat.error().message;
  EXPECT_FALSE(ChatTemplate::from_jinja(""));
}

}  // namespace
}  // namespace kernelrl::tokenizer
