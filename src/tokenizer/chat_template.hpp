// Chat prompts: the model's Jinja chat template is recognised by family (not interpreted) and
// rendered natively, matching transformers' apply_chat_template output for plain role/content
// conversations. Families: ChatML (<|im_start|>role\n...<|im_end|>\n; SmolLM2, Qwen2), with the
// default system message the template inserts when the conversation has none.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "common/message.hpp"
#include "tokenizer/tokenizer.hpp"

namespace kernelrl::tokenizer {

using ChatMessage = common::Message;  // common/message.hpp

enum class ChatTemplateFamily {
  CHATML,
};

class ChatTemplate {
 public:
  // Recognises the family of a Jinja template (as GGUF tokenizer.chat_template or
  // tokenizer_config.json hold it); an unknown one is an error quoting the template's start.
  static common::Expected<ChatTemplate> from_jinja(std::string_view jinja);

  // The prompt for `messages`; with add_generation_prompt the assistant turn is opened at the end.
  std::string render(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

  ChatTemplateFamily family() const { return family_; }

  // The system message inserted when the first message is not a system one; empty if none.
  const std::string& default_system() const { return default_system_; }

  // The text that ends an assistant turn ("<|im_end|>"): a stop string for sampling.
  const std::string& end_of_turn() const { return end_of_turn_; }

  // end_of_turn() as a single token id of `tokenizer`; an error names the token if it is missing.
  common::Expected<int32_t> end_of_turn_id(const Tokenizer& tokenizer) const;

 private:
  ChatTemplateFamily family_ = ChatTemplateFamily::CHATML;
  std::string default_system_;
  std::string end_of_turn_;
};

// A Jinja string literal's body with its escapes (\n, \t, \', \", \\) resolved (exposed for tests).
std::string unescape_jinja_string(std::string_view body);

}  // namespace kernelrl::tokenizer
