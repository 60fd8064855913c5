// The alphabet is GPT-2's bytes_to_unicode(): bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF map to
// the code point of the same value; the other 68 bytes map, in order, to U+0100, U+0101, ...
#include "tokenizer/byte_level.hpp"

#include <array>

#include "tokenizer/utf8.hpp"

namespace kernelrl::tokenizer::byte_level {

namespace {

struct Alphabet {
  std::array<std::string, 256> spelling;  // byte -> UTF-8 of its code point
  std::array<int, 0x144> byte_of;         // code point -> byte, -1 outside the alphabet

  Alphabet() {
    byte_of.fill(-1);
    char32_t next_shifted = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : next_shifted++;
      utf8::append(spelling[b], cp);
      byte_of[cp] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

const std::string& spell_byte(unsigned char b) { return alphabet().spelling[b]; }

std::string spell(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += spell_byte(static_cast<unsigned char>(c));
  return out;
}

std::optional<std::string> unspell(std::string_view spelled) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(spelled.size());
  std::size_t pos = 0;
  while (pos < spelled.size()) {
    if (utf8::valid_sequence_length(spelled, pos) == 0) return std::nullopt;
    std::size_t length = 0;
    const char32_t cp = utf8::decode_at(spelled, pos, length);
    if (cp >= a.byte_of.size() || a.byte_of[cp] < 0) return std::nullopt;
    out += static_cast<char>(a.byte_of[cp]);
    pos += length;
  }
  return out;
}

}  // namespace kernelrl::tokenizer::byte_level
