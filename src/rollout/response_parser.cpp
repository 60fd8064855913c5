#include "rollout/response_parser.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kernelrl::rollout {

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

struct Block {
  std::string language;
  std::size_t body_begin = 0, body_end = 0;  // [begin, end) of the code
  std::size_t after = 0;                     // first character after the closing fence line
};

// Fenced blocks: a line starting with ``` opens (the rest of the line is the language), the next
// line starting with ``` closes. Returns false if a block is left open; with `keep_open` that
// block is still added, running to the end of the text.
bool find_blocks(std::string_view text, std::vector<Block>& blocks, bool keep_open = false) {
  std::size_t pos = 0;
  bool open = false;
  Block current;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::size_t line_end = eol == std::string_view::npos ? text.size() : eol;
    std::string_view line = text.substr(pos, line_end - pos);
    std::size_t indent = line.find_first_not_of(" \t");
    bool fence = indent != std::string_view::npos && line.substr(indent).rfind("```", 0) == 0;
    std::size_t next = eol == std::string_view::npos ? text.size() + 1 : eol + 1;
    if (fence && !open) {
      current = Block{};
      current.language = lower(trim(line.substr(indent + 3)));
      current.body_begin = std::min(next, text.size());
      open = true;
    } else if (fence && open) {
      current.body_end = pos;
      current.after = std::min(next, text.size());
      blocks.push_back(current);
      open = false;
    }
    pos = next;
  }
  if (open && keep_open) {
    current.body_end = text.size();
    current.after = text.size();
    blocks.push_back(current);
  }
  return !open;
}

}  // namespace

bool accepts_language(common::Format format, std::string_view language) {
  const std::string l = lower(language);
  switch (format) {
    case common::Format::NATIVE:
      return l == "cuda" || l == "cu" || l == "cpp" || l == "c++";
    case common::Format::HOST:
      return l == "cpp" || l == "c++";
    case common::Format::KERNELBENCH:
      return l == "python" || l == "py";
  }
  return false;
}

ParsedResponse parse_response(std::string_view content, std::string_view reasoning, common::Format format,
                              bool lenient) {
  ParsedResponse r;
  r.thoughts = trim(reasoning);
  std::string_view body = content;
  auto add_thoughts = [&r](std::string_view text) { r.thoughts += (r.thoughts.empty() ? "" : "\n") + trim(text); };
  const std::size_t start = body.find_first_not_of(" \t\r\n");
  const bool opens = start != std::string_view::npos && body.substr(start).rfind("<think>", 0) == 0;
  const std::size_t thoughts_begin = opens ? start + 7 : 0;
  const std::size_t close = body.find("</think>", thoughts_begin);
  if (opens && close == std::string_view::npos) {
    add_thoughts(body.substr(thoughts_begin));
    r.error = "the response ended inside <think> (no code after the thoughts; it may have been cut off)";
    return r;
  }
  // A </think> without an opening tag: the chat template opened the thoughts in the prompt (QwQ,
  // R1 distills) and the server has no reasoning parser, so everything before it is thoughts.
  if (close != std::string_view::npos) {
    add_thoughts(body.substr(thoughts_begin, close - thoughts_begin));
    body = body.substr(close + 8);
  }
  std::vector<Block> blocks;
  if (!find_blocks(body, blocks, lenient) && !lenient) {
    r.error = "a ``` code block is not closed (the response may have been cut off)";
    return r;
  }
  const Block* last = nullptr;
  for (const auto& b : blocks)
    if (lenient || accepts_language(format, b.language)) last = &b;
  if (!last) {
    const char* want = format == common::Format::KERNELBENCH ? "```python" : format == common::Format::HOST ? "```cpp" : "```cuda";
    r.error = std::string("no ") + want + " code block found";
    return r;
  }
  r.code = std::string(body.substr(last->body_begin, last->body_end - last->body_begin));
  if (trim(r.code).empty()) {
    r.error = "the code block is empty";
    return r;
  }
  r.summary = trim(body.substr(last->after));
  r.ok = true;
  return r;
}

}  // namespace kernelrl::rollout
