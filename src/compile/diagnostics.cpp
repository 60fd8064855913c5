// Compiler output for a model: the first few errors with their source line and caret, scratch
// paths replaced by the candidate's file name, warnings and notes dropped when errors exist, and a
// hard cap on length. Hand-written matching, not std::regex: template errors produce lines tens of
// kilobytes long, on which libstdc++'s recursive regex can exhaust the stack.
#include "compile/diagnostics.hpp"

#include <array>
#include <cctype>
#include <vector>

#include "compile/compiler.hpp"

namespace kernelrl::compile {

namespace detail {

namespace {

constexpr std::size_t kMaxLineChars = 400;  // one line of the excerpt, longer lines are cut

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back(l);
    pos = eol + 1;
  }
  return lines;
}

std::string cap_line(std::string_view line, std::size_t max_chars) {
  if (line.size() <= max_chars) return std::string(line);
  return std::string(line.substr(0, max_chars > 6 ? max_chars - 6 : max_chars)) + " [...]";
}

// Parses a trailing ":LINE" or ":LINE:COL" off `prefix`; returns the line (0 if none) and leaves
// the file name in `file`.
int split_location(std::string_view prefix, std::string& file) {
  auto take_number = [](std::string_view& s) -> int {
    std::size_t end = s.size(), begin = end;
    while (begin > 0 && is_digit(s[begin - 1])) --begin;
    if (begin == end || begin == 0 || s[begin - 1] != ':' || end - begin > 9) return -1;
    int v = std::stoi(std::string(s.substr(begin)));
    s = s.substr(0, begin - 1);
    return v;
  };
  std::string_view rest = prefix;
  int last = take_number(rest);
  if (last < 0) {
    file = std::string(prefix);
    return 0;
  }
  std::string_view before = rest;
  int first = take_number(before);
  if (first >= 0) {  // LINE:COL
    file = std::string(before);
    return first;
  }
  file = std::string(rest);
  return last;
}

DiagKind kind_of_word(std::string_view word) {
  if (word == "error" || word == "fatal error" || word == "catastrophic error" || word == "fatal") return DiagKind::ERROR;
  if (word == "warning") return DiagKind::WARNING;
  return DiagKind::NOTE;  // note, remark, info
}

// "ptxas error   : text", "nvcc fatal   : text", "nvlink warning : text".
bool classify_tool_line(std::string_view l, DiagLine& d) {
  static constexpr std::array<std::string_view, 6> kTools{"ptxas", "nvcc", "nvlink", "fatbinary", "cicc", "cudafe++"};
  for (std::string_view tool : kTools) {
    if (!starts_with(l, tool) || l.size() <= tool.size() || l[tool.size()] != ' ') continue;
    std::size_t i = tool.size();
    while (i < l.size() && l[i] == ' ') ++i;
    std::size_t w = i;
    while (i < l.size() && std::isalpha(static_cast<unsigned char>(l[i]))) ++i;
    std::string_view word = l.substr(w, i - w);
    while (i < l.size() && l[i] == ' ') ++i;
    if (i >= l.size() || l[i] != ':') return false;
    if (word != "error" && word != "fatal" && word != "warning" && word != "info") return false;
    d.kind = kind_of_word(word);
    d.file = std::string(tool);
    std::size_t t = i + 1;
    while (t < l.size() && l[t] == ' ') ++t;
    d.text = std::string(l.substr(t));
    return true;
  }
  return false;
}

// nvcc front end: "path(LINE): error: text", "path(LINE): warning #177-D: text".
bool classify_nvcc_line(std::string_view l, DiagLine& d) {
  for (std::size_t p = l.find("): "); p != std::string_view::npos; p = l.find("): ", p + 1)) {
    std::size_t open = l.rfind('(', p);
    if (open == std::string_view::npos || open + 1 == p) continue;
    bool digits = true;
    for (std::size_t k = open + 1; k < p; ++k) digits = digits && is_digit(l[k]);
    if (!digits || p - open > 10) continue;
    std::string_view rest = l.substr(p + 3);
    static constexpr std::array<std::string_view, 5> kWords{"catastrophic error", "fatal error", "error", "warning",
                                                            "remark"};
    for (std::string_view word : kWords) {
      if (!starts_with(rest, word)) continue;
      std::size_t colon = rest.find(':', word.size());
      if (colon == std::string_view::npos) continue;
      std::string_view between = rest.substr(word.size(), colon - word.size());
      if (!between.empty() && between.front() != ' ') continue;  // "errors" is not "error"
      d.kind = kind_of_word(word);
      d.file = std::string(l.substr(0, open));
      d.line = std::stoi(std::string(l.substr(open + 1, p - open - 1)));
      std::size_t t = colon + 1;
      while (t < rest.size() && rest[t] == ' ') ++t;
      d.text = std::string(rest.substr(t));
      return true;
    }
  }
  return false;
}

// gcc/g++/collect2: "path:LINE:COL: error: text", "cc1plus: fatal error: text", "path:L:C:   required from".
bool classify_gcc_line(std::string_view l, DiagLine& d) {
  static constexpr std::array<std::string_view, 4> kMarks{": fatal error: ", ": error: ", ": warning: ", ": note: "};
  std::size_t best = std::string_view::npos;
  std::string_view best_mark;
  for (std::string_view mark : kMarks) {
    std::size_t p = l.find(mark);
    if (p < best) best = p, best_mark = mark;
  }
  if (best != std::string_view::npos) {
    std::string_view word = best_mark.substr(2, best_mark.size() - 4);
    d.kind = kind_of_word(word);
    d.line = split_location(l.substr(0, best), d.file);
    d.text = std::string(l.substr(best + best_mark.size()));
    return true;
  }
  std::size_t req = l.find(":   ");
  if (req != std::string_view::npos) {
    std::string file;
    if (split_location(l.substr(0, req), file) > 0) {
      d.kind = DiagKind::OTHER;
      d.file = file;
      d.text = std::string(l.substr(req + 4));
      return true;
    }
  }
  return false;
}

}  // namespace

DiagLine classify_line(std::string_view l) {
  DiagLine d;
  if (l.empty() || l.front() == ' ' || l.front() == '\t') return d;
  if (l.find(" detected in the compilation of ") != std::string_view::npos || l == "compilation terminated." ||
      starts_with(l, "Remark: The warnings can be suppressed") || starts_with(l, "ninja: build stopped")) {
    d.kind = DiagKind::SUMMARY;
    return d;
  }
  if (classify_tool_line(l, d) || classify_nvcc_line(l, d) || classify_gcc_line(l, d)) return d;
  for (std::string_view phrase : {std::string_view("undefined reference to "), std::string_view("multiple definition of ")}) {
    if (std::size_t p = l.find(phrase); p != std::string_view::npos) {
      d.kind = DiagKind::ERROR;
      d.file = "ld";
      d.text = std::string(l.substr(p));
      return d;
    }
  }
  bool scope_line = !l.empty() && l.back() == ':' &&
                    (l.find(": In ") != std::string_view::npos || l.find(": At ") != std::string_view::npos);
  if (scope_line || starts_with(l, "In file included from ") || starts_with(l, "/usr/bin/ld: ") ||
      starts_with(l, "FAILED: ") || starts_with(l, "Traceback (most recent call last)")) {
    d.kind = DiagKind::OTHER;
  }
  return d;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (std::size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, pos)) {
    out.append(text, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string first_error(const std::string& output, const std::string& scratch_path, const std::string& display_name) {
  const std::string text = replace_all(output, scratch_path, display_name);
  for (std::string_view l : split_lines(text)) {
    DiagLine d = classify_line(l);
    if (d.kind != DiagKind::ERROR) continue;
    std::string msg;
    if (d.line > 0) {
      msg = d.file + ":" + std::to_string(d.line) + ": error: " + d.text;
    } else if (d.file == "ld") {
      msg = display_name + ": link error: " + d.text;
    } else {
      msg = (d.file.empty() ? display_name : d.file) + ": error: " + d.text;
    }
    return cap_line(msg, kMaxLineChars);
  }
  return "";
}

std::string traceback_tail(const std::string& output, std::size_t max_lines) {
  std::size_t start = output.rfind("Traceback (most recent call last):");
  std::vector<std::string_view> lines = split_lines(std::string_view(output).substr(start == std::string::npos ? 0 : start));
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string out;
  if (first > 0) out += "...\n";
  for (std::size_t i = first; i < lines.size(); ++i) out += cap_line(lines[i], kMaxLineChars) + "\n";
  return out;
}

}  // namespace detail

namespace {

struct Block {
  detail::DiagKind kind;
  std::vector<std::string> lines;
};

std::vector<Block> parse_blocks(std::string_view text) {
  std::vector<Block> blocks;
  bool open = false;
  for (std::string_view l : detail::split_lines(text)) {
    detail::DiagLine d = detail::classify_line(l);
    if (d.kind == detail::DiagKind::SUMMARY) {
      open = false;
    } else if (d.kind != detail::DiagKind::CONTEXT) {
      blocks.push_back({d.kind, {std::string(l)}});
      open = true;
    } else if (open) {
      blocks.back().lines.emplace_back(l);
    } else if (!l.empty()) {
      blocks.push_back({detail::DiagKind::OTHER, {std::string(l)}});
      open = true;
    }
  }
  for (Block& b : blocks) {
    while (b.lines.size() > 1 && b.lines.back().find_first_not_of(" \t") == std::string::npos) b.lines.pop_back();
  }
  return blocks;
}

// The last lines of text that fit in max_chars, cut at a line boundary.
std::string tail_of(std::string_view text, std::size_t max_chars) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() <= max_chars) return std::string(text);
  std::size_t keep = max_chars > 4 ? max_chars - 4 : 0;
  std::string_view tail = text.substr(text.size() - keep);
  std::size_t nl = tail.find('\n');
  if (nl != std::string_view::npos) tail.remove_prefix(nl + 1);
  return "...\n" + std::string(tail);
}

}  // namespace

std::string trim_diagnostics(const std::string& output, const std::string& scratch_path,
                             const std::string& display_name, int max_errors, std::size_t max_chars) {
  using detail::DiagKind;
  const std::string text = detail::replace_all(output, scratch_path, display_name);
  std::vector<Block> blocks = parse_blocks(text);
  std::vector<const Block*> selected;
  int n_errors = 0;
  for (const Block& b : blocks) n_errors += b.kind == DiagKind::ERROR;
  for (const Block& b : blocks) {
    bool keep = n_errors > 0 ? b.kind == DiagKind::ERROR : b.kind == DiagKind::WARNING || b.kind == DiagKind::NOTE;
    if (keep) selected.push_back(&b);
  }
  if (selected.empty()) return tail_of(text, max_chars);  // nothing recognised: the end says most

  constexpr std::size_t kSuffixReserve = 32;  // room for "... (N more errors)"
  const std::size_t budget = max_chars > kSuffixReserve ? max_chars - kSuffixReserve : max_chars;
  const std::size_t line_cap = std::min(detail::kMaxLineChars, budget > 1 ? budget - 1 : budget);
  std::string out;
  int n_shown = 0;
  bool cut = false;
  for (const Block* b : selected) {
    if (n_shown == max_errors) break;
    bool header_shown = false;
    for (const std::string& line : b->lines) {
      std::string l = detail::cap_line(line, line_cap);
      if (out.size() + l.size() + 1 > budget) {
        cut = true;
        break;
      }
      out += l + "\n";
      header_shown = true;
    }
    n_shown += header_shown;
    if (cut) break;
  }
  int n_more = n_errors > 0 ? n_errors - n_shown : 0;
  if (n_more > 0) {
    out += "... (" + std::to_string(n_more) + (n_more == 1 ? " more error)" : " more errors)");
  } else if (cut) {
    out += "... (truncated)";
  } else if (!out.empty()) {
    out.pop_back();
  }
  return out;
}

}  // namespace kernelrl::compile
