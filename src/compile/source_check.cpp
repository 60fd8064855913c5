// check_source: the static checks every candidate passes before a compiler sees it. They are
// cheap (one linear pass) and run on every request, cache hits included.
#include <cctype>
#include <optional>
#include <string_view>

#include "compile/compiler.hpp"
#include "compile/python_scan.hpp"
#include "compile/source_scan.hpp"

namespace kernelrl::compile {

namespace {

using common::Format;
using common::Status;

constexpr std::string_view kEntrySignature =
    "extern \"C\" int kernelrl_forward(const DLTensor* inputs, int n_inputs, const DLTensor* params, "
    "int n_params, DLTensor* outputs, int n_outputs, void* stream)";

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Position just after `word` used as a whole identifier at or after `from`, or npos.
std::size_t find_word(std::string_view text, std::string_view word, std::size_t from = 0) {
  for (std::size_t p = text.find(word, from); p != std::string_view::npos; p = text.find(word, p + 1)) {
    bool left_ok = p == 0 || !is_ident_char(text[p - 1]);
    std::size_t end = p + word.size();
    bool right_ok = end == text.size() || !is_ident_char(text[end]);
    if (left_ok && right_ok) return end;
  }
  return std::string_view::npos;
}

// `word` followed (after optional whitespace) by `next`, anywhere in text.
bool has_word_then(std::string_view text, std::string_view word, std::string_view next) {
  for (std::size_t end = find_word(text, word); end != std::string_view::npos; end = find_word(text, word, end)) {
    std::size_t i = end;
    while (i < text.size() && is_space(text[i])) ++i;
    if (text.substr(i, next.size()) == next) return true;
  }
  return false;
}

// A Python line that starts (after indentation) with `class ModelNew`.
bool defines_model_new(std::string_view source) {
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t eol = source.find('\n', pos);
    if (eol == std::string_view::npos) eol = source.size();
    std::string_view line = source.substr(pos, eol - pos);
    pos = eol + 1;
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    line.remove_prefix(i);
    if (line.substr(0, 5) != "class" || line.size() < 6 || !is_space(line[5])) continue;
    std::size_t name = 6;
    while (name < line.size() && is_space(line[name])) ++name;
    if (line.substr(name, 8) == "ModelNew" && (name + 8 == line.size() || !is_ident_char(line[name + 8]))) return true;
  }
  return false;
}

CompileResult failed(Status status, const std::string& display_name, const std::string& what) {
  CompileResult r;
  r.status = status;
  r.message = display_name + ": " + what;
  r.log_excerpt = r.message;
  return r;
}

// A kernelbench candidate's C++ lives in Python strings, which the compiler sees whole: an #include
// there that names a file by absolute path or climbs with '..' reads a host file into the build (and
// its first lines into an error message). Torch's, CUDA's and the standard headers are found on the
// include path and need neither.
std::optional<CompileResult> include_outside_the_toolchain(const std::string& source, const std::string& display_name) {
  for (const detail::IncludeDirective& inc : detail::find_includes(source)) {
    if (inc.computed || inc.header.empty()) continue;
    bool climbs = inc.header.front() == '/';
    for (std::size_t p = inc.header.find(".."); !climbs && p != std::string::npos; p = inc.header.find("..", p + 1)) {
      climbs = (p == 0 || inc.header[p - 1] == '/') && (p + 2 == inc.header.size() || inc.header[p + 2] == '/');
    }
    if (!climbs) continue;
    CompileResult r = failed(Status::REJECTED, display_name, "");
    r.message = display_name + ":" + std::to_string(inc.line) + ": #include \"" + inc.header +
                "\" is not allowed: absolute and '..' include paths read files outside the toolchain's headers";
    r.log_excerpt = r.message;
    return r;
  }
  return std::nullopt;
}

}  // namespace

CompileResult check_source(const std::string& source, Format format, const std::string& display_name,
                           std::uint64_t max_bytes, bool system_access_rules, common::RuleSet rules) {
  if (source.size() > max_bytes) {
    return failed(Status::FORMAT_ERROR, display_name,
                  std::to_string(source.size()) + " bytes, over the " + std::to_string(max_bytes) + "-byte limit");
  }
  if (std::size_t nul = source.find('\0'); nul != std::string::npos) {
    return failed(Status::FORMAT_ERROR, display_name,
                  "binary data (NUL byte at offset " + std::to_string(nul) + "), expected UTF-8 source text");
  }
  if (std::size_t bad = detail::find_invalid_utf8(source); bad != std::string_view::npos) {
    return failed(Status::FORMAT_ERROR, display_name,
                  "not UTF-8 text (invalid byte at offset " + std::to_string(bad) + ")");
  }
  bool blank = true;
  for (char c : source) blank = blank && is_space(c);
  if (blank) {
    return failed(Status::FORMAT_ERROR, display_name, source.empty() ? "empty file" : "file holds only whitespace");
  }

  if (auto directive = detail::find_file_reading_directive(source)) {
    CompileResult r = failed(Status::REJECTED, display_name, "");
    r.message = display_name + ":" + std::to_string(directive->line) + ": the assembler directive " + directive->directive +
                " is not allowed: it reads a file into the build (candidates compute from their inputs only)";
    r.log_excerpt = r.message;
    return r;
  }
  for (const detail::IncludeDirective& inc : detail::find_includes(source)) {
    // In a kernelbench file a line such as "# embed the weights" is a Python comment, not a directive.
    if (inc.keyword != "embed" || (inc.computed && format == Format::KERNELBENCH)) continue;
    CompileResult r = failed(Status::REJECTED, display_name, "");
    r.message = display_name + ":" + std::to_string(inc.line) +
                ": #embed is not allowed: it reads a file into the build (candidates compute from their inputs only)";
    r.log_excerpt = r.message;
    return r;
  }
  if (format == Format::KERNELBENCH) {
    if (auto outside = include_outside_the_toolchain(source, display_name)) return *outside;
    if (!defines_model_new(source)) {
      return failed(Status::FORMAT_ERROR, display_name,
                    "no `class ModelNew`: a kernelbench candidate defines class ModelNew(nn.Module) with the "
                    "reference's constructor and forward signatures");
    }
    if (auto broken = detail::kernelbench_rule_break(source, system_access_rules, rules)) {
      CompileResult r = failed(Status::REJECTED, display_name, "");
      r.message = display_name + ":" + std::to_string(broken->line) + ": " + broken->reason;
      r.log_excerpt = r.message;
      return r;
    }
    CompileResult ok;
    ok.status = Status::OK;
    return ok;
  }

  const std::string stripped = detail::strip_comments(source);
  if (!has_word_then(stripped, "extern", "\"C\"") || !has_word_then(stripped, "kernelrl_forward", "(")) {
    return failed(Status::FORMAT_ERROR, display_name,
                  "no entry point: define " + std::string(kEntrySignature) + " (declared in <kernelrl/abi.h>)");
  }
  for (const detail::IncludeDirective& inc : detail::find_includes(stripped)) {
    std::string where = display_name + ":" + std::to_string(inc.line) + ": ";
    if (inc.computed) {
      CompileResult r = failed(Status::REJECTED, display_name, "");
      r.message = where + "#" + inc.keyword + " of a macro is not allowed: name the header in <> or \"\"";
      r.log_excerpt = r.message;
      return r;
    }
    if (auto reason = detail::forbidden_header_reason(inc.header)) {
      std::string spelled = inc.angled ? "<" + inc.header + ">" : "\"" + inc.header + "\"";
      CompileResult r = failed(Status::REJECTED, display_name, "");
      r.message = where + "#" + inc.keyword + " " + spelled + " is not allowed: " + *reason +
                  ". Include only <kernelrl/abi.h>, standard C/C++ headers and CUDA headers.";
      r.log_excerpt = r.message;
      return r;
    }
  }
  CompileResult ok;
  ok.status = Status::OK;
  return ok;
}

}  // namespace kernelrl::compile
