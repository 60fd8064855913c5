// UTF-8 helpers for the tokenizer: validation, the lossy repair Rust's String::from_utf8_lossy does
// (so decode() matches Hugging Face byte for byte), and code-point stepping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kernelrl::tokenizer::utf8 {

// Length of the well-formed UTF-8 sequence starting at `text[pos]`, or 0 if it is ill-formed there
// (overlong, surrogate, past U+10FFFF, truncated). `pos` must be < text.size().
std::size_t valid_sequence_length(std::string_view text, std::size_t pos);

// True when all of `text` is well-formed UTF-8.
bool is_valid(std::string_view text);

// `bytes` with each maximal ill-formed subsequence replaced by U+FFFD, as from_utf8_lossy does.
std::string to_valid_lossy(std::string_view bytes);

// The code point of the well-formed sequence at `text[pos]`; its length goes to `length`.
char32_t decode_at(std::string_view text, std::size_t pos, std::size_t& length);

// Appends the UTF-8 encoding of `cp` (must be a scalar value) to `out`.
void append(std::string& out, char32_t cp);

// Unicode White_Space (what Rust's char::is_whitespace tests).
bool is_white_space(char32_t cp);

}  // namespace kernelrl::tokenizer::utf8
