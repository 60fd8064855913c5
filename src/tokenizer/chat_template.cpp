// ChatML recognition: the template names both <|im_start|> and <|im_end|>. A default system
// message is a string literal in the template that reads '<|im_start|>system\n...<|im_end|>'
// (SmolLM2: "You are a helpful AI assistant named SmolLM, ..."; Qwen2: "You are a helpful
// assistant."), inserted before the first message when that one is not a system message.
#include "tokenizer/chat_template.hpp"

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;

namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";

// The quote character of the string literal that contains position `pos`, or 0 if none is open
// (counts unescaped quotes from the start of the enclosing {{ ... }} or {% ... %} block).
char enclosing_quote(std::string_view jinja, std::size_t pos) {
  std::size_t block = 0;
  for (std::string_view opening : {"{{", "{%"}) {
    const std::size_t at = jinja.rfind(opening, pos);
    if (at != std::string_view::npos && at > block) block = at;
  }
  char open = 0;
  for (std::size_t i = block; i < pos; ++i) {
    const char c = jinja[i];
    if (open != 0 && c == '\\') {
      ++i;
    } else if (open == 0 && (c == '\'' || c == '"')) {
      open = c;
    } else if (c == open) {
      open = 0;
    }
  }
  return open;
}

// The default system message, if a literal '<|im_start|>system\n TEXT <|im_end|>' is in the template.
std::string find_default_system(std::string_view jinja) {
  const std::string marker = std::string(kImStart) + "system";
  for (std::size_t at = jinja.find(marker); at != std::string_view::npos; at = jinja.find(marker, at + 1)) {
    const char quote = enclosing_quote(jinja, at);
    if (quote == 0) continue;
    std::size_t body = at + marker.size();
    if (jinja.substr(body, 1) == "\n") {
      body += 1;
    } else if (jinja.substr(body, 2) == "\\n") {
      body += 2;
    } else {
      continue;
    }
    const std::size_t end = jinja.find(kImEnd, body);
    if (end == std::string_view::npos) continue;
    const std::string_view raw = jinja.substr(body, end - body);
    bool closes_literal = false;  // the literal ends before <|im_end|>: the text is not all literal
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\') {
        ++i;
      } else if (raw[i] == quote) {
        closes_literal = true;
        break;
      }
    }
    if (!closes_literal && !raw.empty()) return unescape_jinja_string(raw);
  }
  return "";
}

std::string quote_start(std::string_view jinja) {
  constexpr std::size_t kQuoted = 120;
  std::string start(jinja.substr(0, kQuoted));
  for (char& c : start) {
    if (c == '\n') c = ' ';
  }
  return "`" + start + (jinja.size() > kQuoted ? "...`" : "`");
}

}  // namespace

std::string unescape_jinja_string(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      default: out += e;  // \' \" \\ and anything else: the character itself
    }
  }
  return out;
}

Expected<ChatTemplate> ChatTemplate::from_jinja(std::string_view jinja) {
  if (jinja.empty()) return make_error("the model has no chat template");
  if (jinja.find(kImStart) == std::string_view::npos || jinja.find(kImEnd) == std::string_view::npos) {
    return make_error("unrecognised chat template (supported: ChatML with <|im_start|>/<|im_end|>): " +
                      quote_start(jinja));
  }
  if (jinja.find("<think>") != std::string_view::npos) {
    return make_error("ChatML chat template with <think> reasoning blocks is not supported: " + quote_start(jinja));
  }
  ChatTemplate t;
  t.family_ = ChatTemplateFamily::CHATML;
  t.default_system_ = find_default_system(jinja);
  t.end_of_turn_ = std::string(kImEnd);
  return t;
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt) const {
  std::string out;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i == 0 && !default_system_.empty() && messages[0].role != "system") {
      out.append(kImStart).append("system\n").append(default_system_).append(kImEnd).append("\n");
    }
    out.append(kImStart).append(messages[i].role).append("\n").append(messages[i].content).append(kImEnd).append("\n");
  }
  if (add_generation_prompt) out.append(kImStart).append("assistant\n");
  return out;
}

Expected<int32_t> ChatTemplate::end_of_turn_id(const Tokenizer& tokenizer) const {
  auto id = tokenizer.token_to_id(end_of_turn_);
  if (!id) return make_error("the end-of-turn token `" + end_of_turn_ + "` is not in the tokenizer's vocabulary");
  return *id;
}

}  // namespace kernelrl::tokenizer
