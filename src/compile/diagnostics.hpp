// Reading compiler output: which lines are diagnostics (nvcc, gcc/g++, ptxas, the linker), the
// first error as one line a model can act on, and the tail of a Python traceback. The public
// entry point, trim_diagnostics, is declared in compiler.hpp. Private to the compile subsystem.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kernelrl::compile::detail {

enum class DiagKind {
  ERROR,    // starts an error ("x.cu(3): error: ...", "x.cpp:3:5: error: ...", "ptxas error : ...")
  WARNING,  // starts a warning
  NOTE,     // starts a note, remark or info line
  OTHER,    // starts a block that is neither ("In function ...", "required from ...", "In file included from")
  SUMMARY,  // ends a block and is dropped ("2 errors detected ...", "compilation terminated.")
  CONTEXT,  // belongs to the block above (source line, caret, continuation)
};

struct DiagLine {
  DiagKind kind = DiagKind::CONTEXT;
  std::string file;  // as printed; empty for tool messages
  int line = 0;      // 0 when the message names no line
  std::string text;  // the message after "error:" / "warning:" ...
};

// Classifies one line of compiler output (no trailing newline).
DiagLine classify_line(std::string_view line);

// The first error in `output` as "name:LINE: error: text" (scratch_path replaced by display_name),
// or an empty string when no line of the output is recognisably an error.
std::string first_error(const std::string& output, const std::string& scratch_path, const std::string& display_name);

// The last `max_lines` lines of the last Python traceback in `output` (or of the output when it
// holds none), each line capped, joined with newlines.
std::string traceback_tail(const std::string& output, std::size_t max_lines);

// `text` with every occurrence of `from` replaced by `to` (from must not be empty to have effect).
std::string replace_all(std::string text, std::string_view from, std::string_view to);

}  // namespace kernelrl::compile::detail
