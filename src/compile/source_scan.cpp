// Lexical scanning of candidate sources for the static checks (see source_scan.hpp). The comment
// stripper follows the C++ lexer closely enough that a candidate cannot hide an #include from the
// scan while the compiler still sees it: literal prefixes, digit separators and raw strings are
// tokenised the way the compiler tokenises them.
#include "compile/source_scan.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace kernelrl::compile::detail {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Phase 2 of translation: joins backslash-newline splices. The newlines a splice removes are
// re-emitted after the next real newline, so later lines keep their numbers.
std::string splice_lines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  int pending_newlines = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      std::size_t j = i + 1;
      if (j < s.size() && s[j] == '\r') ++j;
      if (j < s.size() && s[j] == '\n') {
        ++pending_newlines;
        i = j;
        continue;
      }
    }
    out.push_back(s[i]);
    if (s[i] == '\n') {
      out.append(static_cast<std::size_t>(pending_newlines), '\n');
      pending_newlines = 0;
    }
  }
  out.append(static_cast<std::size_t>(pending_newlines), '\n');
  return out;
}

// Copies a '...' or "..." literal starting at s[i] (the quote). An unterminated literal ends at the
// newline, as it does for the compiler's diagnostics. Returns the index after the literal.
std::size_t copy_quoted(const std::string& s, std::size_t i, std::string& out) {
  const char quote = s[i];
  out.push_back(s[i++]);
  while (i < s.size() && s[i] != '\n') {
    char c = s[i];
    out.push_back(c);
    ++i;
    if (c == '\\' && i < s.size() && s[i] != '\n') {
      out.push_back(s[i]);
      ++i;
    } else if (c == quote) {
      break;
    }
  }
  return i;
}

// R"delim( ... )delim" starting at s[i] (the quote). The body is blanked (newlines kept) so text
// inside it never looks like a directive. Returns the index after the literal.
std::size_t copy_raw_string(const std::string& s, std::size_t i, std::string& out) {
  std::size_t open = s.find('(', i + 1);
  if (open == std::string::npos || open - i - 1 > 16) return copy_quoted(s, i, out);  // not a raw string
  std::string closing = ")" + s.substr(i + 1, open - i - 1) + "\"";
  std::size_t end = s.find(closing, open + 1);
  std::size_t stop = end == std::string::npos ? s.size() : end + closing.size();
  out.push_back('"');
  for (std::size_t k = i + 1; k < stop; ++k) out.push_back(s[k] == '\n' ? '\n' : ' ');
  if (end != std::string::npos) out.back() = '"';
  return stop;
}

// A preprocessing number: digits, letters, '.', digit separators and exponent signs.
std::size_t copy_pp_number(const std::string& s, std::size_t i, std::string& out) {
  while (i < s.size()) {
    char c = s[i];
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (next == '+' || next == '-')) {
      out.append(s, i, 2);
      i += 2;
    } else if (is_ident_char(c) || c == '.') {
      out.push_back(c);
      ++i;
    } else if (c == '\'' && is_ident_char(next)) {
      out.append(s, i, 2);
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

bool is_char_prefix(std::string_view id) { return id == "L" || id == "u" || id == "U" || id == "u8"; }
bool is_raw_prefix(std::string_view id) {
  return id == "R" || id == "LR" || id == "uR" || id == "UR" || id == "u8R";
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    std::uint32_t cp = 0, min_cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min_cp = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min_cp = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min_cp = 0x10000;
    } else {
      return i;
    }
    if (i + static_cast<std::size_t>(len) > n) return i;
    for (int k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += static_cast<std::size_t>(len);
  }
  return std::string_view::npos;
}

std::string strip_comments(std::string_view source) {
  const std::string s = splice_lines(source);
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      out.push_back(' ');
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && next == '*') {
      std::size_t end = s.find("*/", i + 2);
      std::size_t stop = end == std::string::npos ? s.size() : end + 2;
      out.push_back(' ');
      out.append(static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                      s.begin() + static_cast<std::ptrdiff_t>(stop), '\n')),
                 '\n');
      i = stop;
    } else if (c == '"' || c == '\'') {
      i = copy_quoted(s, i, out);
    } else if (is_digit(c) || (c == '.' && is_digit(next))) {
      i = copy_pp_number(s, i, out);
    } else if (is_ident_start(c)) {
      std::size_t start = i;
      while (i < s.size() && is_ident_char(s[i])) ++i;
      std::string_view id(s.data() + start, i - start);
      out.append(id);
      if (i < s.size() && s[i] == '"' && is_raw_prefix(id)) {
        i = copy_raw_string(s, i, out);
      } else if (i < s.size() && (s[i] == '"' || s[i] == '\'') && is_char_prefix(id)) {
        i = copy_quoted(s, i, out);
      }
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

std::vector<IncludeDirective> find_includes(std::string_view text) {
  std::vector<IncludeDirective> found;
  int line = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    ++line;
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    pos = eol + 1;
    std::size_t i = 0;
    auto skip_space = [&] {
      while (i < l.size() && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r' || l[i] == '\f' || l[i] == '\v')) ++i;
    };
    skip_space();
    if (i < l.size() && l[i] == '#') {
      ++i;
    } else if (l.substr(i, 2) == "%:") {
      i += 2;
    } else {
      continue;
    }
    skip_space();
    std::size_t start = i;
    while (i < l.size() && is_ident_char(l[i])) ++i;
    std::string_view keyword = l.substr(start, i - start);
    if (keyword != "include" && keyword != "include_next" && keyword != "import" && keyword != "embed") continue;
    skip_space();
    IncludeDirective d;
    d.line = line;
    d.keyword = std::string(keyword);
    char open = i < l.size() ? l[i] : '\0';
    char close = open == '<' ? '>' : open == '"' ? '"' : '\0';
    std::size_t end = close ? l.find(close, i + 1) : std::string_view::npos;
    if (end == std::string_view::npos) {
      d.computed = true;
    } else {
      d.angled = open == '<';
      d.header = std::string(l.substr(i + 1, end - i - 1));
    }
    found.push_back(std::move(d));
  }
  return found;
}

std::optional<std::string> forbidden_header_reason(std::string_view header) {
  if (header.empty()) return "an empty header name";
  if (header.front() == '/') return "absolute include paths are not allowed";
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= header.size()) {
    std::size_t slash = header.find('/', pos);
    if (slash == std::string_view::npos) slash = header.size();
    std::string_view part = header.substr(pos, slash - pos);
    if (part == "..") return "'..' in include paths is not allowed";
    if (!part.empty() && part != ".") parts.push_back(to_lower(part));
    pos = slash + 1;
  }
  if (parts.empty()) return "an empty header name";
  static constexpr std::array<std::string_view, 5> kTorchDirs{"torch", "aten", "c10", "caffe2", "pybind11"};
  for (const auto& part : parts) {
    if (std::find(kTorchDirs.begin(), kTorchDirs.end(), part) != kTorchDirs.end()) {
      return "PyTorch and pybind11 headers are forbidden";
    }
  }
  const std::string& base = parts.back();
  if (base == "python.h") return "the Python C API is forbidden";
  if (base == "curand.h") return "the cuRAND host API is forbidden (curand_kernel.h is allowed)";
  static constexpr std::array<std::string_view, 9> kLibraryPrefixes{
      "cublas", "cudnn", "cufft", "cusolver", "cusparse", "cutensor", "nccl", "npp", "nvblas"};
  for (std::string_view prefix : kLibraryPrefixes) {
    if (base.rfind(prefix, 0) == 0) {
      return "library headers (cuBLAS, cuDNN, cuFFT, cuSOLVER, cuSPARSE, NCCL, ...) are forbidden: "
             "write the kernel yourself";
    }
  }
  return std::nullopt;
}

std::optional<FileDirective> find_file_reading_directive(std::string_view source) {
  static constexpr std::string_view kDirectives[] = {".incbin", ".include"};
  std::string lower(source);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (std::string_view directive : kDirectives) {
    for (std::size_t p = lower.find(directive); p != std::string::npos; p = lower.find(directive, p + 1)) {
      const std::size_t end = p + directive.size();
      const bool whole = end == lower.size() || !(std::isalnum(static_cast<unsigned char>(lower[end])) || lower[end] == '_');
      // `.include` right after an identifier is a member access (`x.include`), not a directive.
      const bool after_name = p > 0 && (std::isalnum(static_cast<unsigned char>(lower[p - 1])) || lower[p - 1] == '_' ||
                                        lower[p - 1] == ')' || lower[p - 1] == ']');
      if (!whole || after_name) continue;
      int line = 1;
      for (std::size_t i = 0; i < p; ++i) line += source[i] == '\n';
      return FileDirective{line, std::string(directive)};
    }
  }
  return std::nullopt;
}

}  // namespace kernelrl::compile::detail
