#include "train/format_reward.hpp"

#include <string_view>

#include "common/fs.hpp"

namespace kernelrl::train {

namespace {

// Hand-written scanning, linear in the code's length: std::regex recursed once per character of a
// repeated class (a long degenerate answer overflowed a worker thread's stack), and a backtracking
// engine is quadratic on the launch marker's `\w+` over long runs of letters.
using Pos = std::string_view::size_type;
constexpr Pos npos = std::string_view::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
Pos skip_spaces(std::string_view s, Pos i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}
Pos skip_word(std::string_view s, Pos i) {
  while (i < s.size() && is_word(s[i])) ++i;
  return i;
}
// `i` is where `literal` starts in `s`, or npos.
Pos after_literal(std::string_view s, Pos i, std::string_view literal) {
  return s.substr(i).starts_with(literal) ? i + literal.size() : npos;
}
// Whether `s` continues at `i` with optional spaces and then '('.
bool opens_call(std::string_view s, Pos i) {
  i = skip_spaces(s, i);
  return i < s.size() && s[i] == '(';
}

// __global__\s+void\s+\w+\s*\(
bool has_kernel(std::string_view s) {
  for (Pos at = s.find("__global__"); at != npos; at = s.find("__global__", at + 1)) {
    Pos i = at + 10;
    Pos j = skip_spaces(s, i);
    if (j == i || (j = after_literal(s, j, "void")) == npos) continue;
    i = skip_spaces(s, j);
    if (i == j || (j = skip_word(s, i)) == i) continue;
    if (opens_call(s, j)) return true;
  }
  return false;
}

// extern\s+"C"[^;{]*kernelrl_forward\s*\(
bool has_entry_point(std::string_view s) {
  for (Pos at = s.find("extern"); at != npos; at = s.find("extern", at + 1)) {
    Pos i = at + 6;
    Pos j = skip_spaces(s, i);
    if (j == i || (j = after_literal(s, j, "\"C\"")) == npos) continue;
    const Pos end = std::min(s.find_first_of(";{", j), s.size());
    for (Pos f = s.find("kernelrl_forward", j); f != npos && f + 16 <= end; f = s.find("kernelrl_forward", f + 1)) {
      if (opens_call(s, f + 16)) return true;
    }
    if (end == s.size()) return false;
    at = end;  // a later extern "C" before this ';' or '{' sees the same span
  }
  return false;
}

// \w+\s*<<<[^>]+>>>\s*\(
bool has_launch(std::string_view s) {
  Pos first_gt = 0;  // the first '>' at or after the last launch's configuration start
  for (Pos at = s.find("<<<"); at != npos; at = s.find("<<<", at + 1)) {
    Pos before = at;
    while (before > 0 && is_space(s[before - 1])) --before;
    if (before == 0 || !is_word(s[before - 1])) continue;
    if (first_gt < at + 3) first_gt = s.find('>', at + 3);
    if (first_gt == npos) return false;
    if (first_gt > at + 3 && after_literal(s, first_gt, ">>>") != npos && opens_call(s, first_gt + 3)) return true;
  }
  return false;
}

// #include\s*<kernelrl/abi\.h>
bool has_abi_include(std::string_view s) {
  for (Pos at = s.find("#include"); at != npos; at = s.find("#include", at + 1)) {
    if (after_literal(s, skip_spaces(s, at + 8), "<kernelrl/abi.h>") != npos) return true;
  }
  return false;
}

struct Marker {
  const char* what;  // as the feedback names it
  bool (*present)(std::string_view);
};
constexpr Marker kMarkers[] = {{"a __global__ kernel", has_kernel},
                               {"the extern \"C\" kernelrl_forward entry point", has_entry_point},
                               {"a <<<...>>> launch", has_launch},
                               {"#include <kernelrl/abi.h>", has_abi_include}};

// What the model reads after the attempt: that nothing was compiled or run, and what is missing.
std::string format_feedback(const std::string& code) {
  int n = 0;
  std::string missing;
  for (const auto& m : kMarkers) {
    if (m.present(code)) {
      ++n;
    } else {
      missing += std::string(missing.empty() ? "" : ", ") + m.what;
    }
  }
  return "format reward, the code was not compiled or run: " + std::to_string(n) + " of 4 markers of the native format" +
         (missing.empty() ? "" : " (missing: " + missing + ")");
}

}  // namespace

double format_marker_fraction(const std::string& code) {
  int n = 0;
  for (const auto& m : kMarkers) n += m.present(code);
  return n / 4.0;
}

common::Expected<eval::EvalResult> FormatRewardEvaluator::evaluate(const eval::EvalJob& job) {
  auto code = common::read_file(job.candidate);
  if (!code) return code.error();
  eval::EvalResult r;
  r.task = job.task.string();
  r.candidate = job.candidate.string();
  r.status = common::Status::OK;
  r.correct = true;  // "well-formed" under this reward: see the header
  r.speedup = format_marker_fraction(*code);  // the fraction of markers present: the score's speedup term
  r.error.message = format_feedback(*code);
  r.isolation["reward"] = "format";
  return r;
}

}  // namespace kernelrl::train
