// UTF-8 well-formedness follows the Unicode standard's table 3-7 (no overlongs, no surrogates,
// nothing past U+10FFFF); the lossy repair replaces each maximal subpart with one U+FFFD.
#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer::utf8 {

namespace {

// How many bytes a sequence with this lead byte has and the range its second byte must lie in.
struct LeadInfo {
  std::size_t length;  // 0: not a lead byte
  unsigned char second_lo;
  unsigned char second_hi;
};

LeadInfo lead_info(unsigned char b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Bytes of the longest prefix at `pos` that could still start a well-formed sequence (at least 1).
std::size_t maximal_subpart(std::string_view text, std::size_t pos) {
  const LeadInfo info = lead_info(static_cast<unsigned char>(text[pos]));
  if (info.length <= 1) return 1;
  std::size_t n = 1;
  for (; n < info.length && pos + n < text.size(); ++n) {
    const auto b = static_cast<unsigned char>(text[pos + n]);
    const unsigned char lo = n == 1 ? info.second_lo : 0x80;
    const unsigned char hi = n == 1 ? info.second_hi : 0xBF;
    if (b < lo || b > hi) break;
  }
  return n;
}

}  // namespace

std::size_t valid_sequence_length(std::string_view text, std::size_t pos) {
  const LeadInfo info = lead_info(static_cast<unsigned char>(text[pos]));
  if (info.length == 0 || pos + info.length > text.size()) return 0;
  return maximal_subpart(text, pos) == info.length || info.length == 1 ? info.length : 0;
}

bool is_valid(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const std::size_t n = valid_sequence_length(text, pos);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

std::string to_valid_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + 8);
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t n = valid_sequence_length(bytes, pos);
    if (n > 0) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      pos += maximal_subpart(bytes, pos);
    }
  }
  return out;
}

char32_t decode_at(std::string_view text, std::size_t pos, std::size_t& length) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  length = lead_info(b0).length;
  if (length <= 1) {
    length = 1;
    return b0;
  }
  char32_t cp = b0 & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return cp;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

}  // namespace kernelrl::tokenizer::utf8
