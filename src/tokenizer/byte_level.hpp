// GPT-2's byte-level alphabet: every byte is spelled as one printable code point (printable ASCII
// and Latin-1 as themselves, the rest shifted to U+0100 and up), so a vocabulary file can hold any
// byte string as text. Tokens are stored here as raw bytes; these functions convert the spelling.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernelrl::tokenizer::byte_level {

// The UTF-8 spelling of byte `b` in the alphabet ("Ġ" for ' ', "Ċ" for '\n').
const std::string& spell_byte(unsigned char b);

// `bytes` spelled in the alphabet (what a tokenizer.json vocabulary key looks like).
std::string spell(std::string_view bytes);

// The raw bytes a spelled token stands for; nullopt if a code point is outside the alphabet
// (such tokens, e.g. added tokens with odd characters, stand for their own UTF-8 bytes).
std::optional<std::string> unspell(std::string_view spelled);

}  // namespace kernelrl::tokenizer::byte_level
