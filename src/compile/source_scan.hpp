// Lexical helpers for the static checks on candidate sources: UTF-8 validation, a C/C++ comment
// stripper that knows string, character and raw-string literals, the #include directives of a
// file, and the rule that says which headers a native or host candidate may not include.
// Private to the compile subsystem.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelrl::compile::detail {

// Offset of the first byte that is not part of valid UTF-8 (overlong forms, surrogates and code
// points past U+10FFFF are invalid), or npos if the whole text is valid.
std::size_t find_invalid_utf8(std::string_view text);

// The source as the preprocessor's directive scanner sees it: backslash-newline splices joined,
// comments replaced by a space, raw-string bodies blanked. Ordinary string and character literals
// are kept. Every newline survives (a splice's newline moves to the end of its logical line), so
// line numbers still match the original file.
std::string strip_comments(std::string_view source);

struct IncludeDirective {
  int line = 0;          // 1-based line of the directive in the original file
  std::string keyword;   // "include", "include_next", "import" or "embed" (C23/C++26: a file's bytes)
  std::string header;    // text between <> or ""; empty when computed
  bool angled = false;   // <header> rather than "header"
  bool computed = false; // the directive names a macro instead of a header
};

// Every #include / #include_next / #import / #embed (also spelt with the %: digraph) in text that went
// through strip_comments, in order.
std::vector<IncludeDirective> find_includes(std::string_view stripped);

// Why a native or host candidate may not include `header` ("PyTorch headers", "absolute include
// paths", ...), or nullopt if it may.
std::optional<std::string> forbidden_header_reason(std::string_view header);

// An assembler directive that reads a file into the build (`.incbin "/etc/passwd"`, `.include`),
// anywhere in the source (inline asm strings included), with its 1-based line; nullopt if none.
// The compiler can read any file its process can, and what it read comes back in the library or
// in an error message.
struct FileDirective {
  int line = 0;
  std::string directive;  // ".incbin" or ".include"
};
std::optional<FileDirective> find_file_reading_directive(std::string_view source);

}  // namespace kernelrl::compile::detail
