// Splits a policy's response into what the rollout needs: the model's thoughts (from <think> tags
// or a separate reasoning field), the candidate code (the last fenced block of the expected
// language) and the model's own summary (the text after that block). A response that breaks
// the format rules is a parse error with a reason a model can act on.
#pragma once

#include <string>
#include <string_view>

#include "common/status.hpp"

namespace kernelrl::rollout {

struct ParsedResponse {
  bool ok = false;
  std::string error;     // when !ok: "no ```cuda block found", "unterminated ``` block", ...
  std::string thoughts;  // <think> content (dropped from later turns' prompts)
  std::string code;      // the last fenced block of the expected language
  std::string summary;   // text after that block, trimmed
};

// The fence languages accepted for a format: native "cuda"/"cu"/"cpp"/"c++", host "cpp"/"c++",
// kernelbench "python"/"py".
bool accepts_language(common::Format format, std::string_view language);

// Parses `content`; `reasoning` is the server's separate reasoning field, if any. Thoughts in
// <think>...</think> at the start of `content` are moved out; an unclosed <think> makes the whole
// response thoughts (a truncated response), which is a parse error. Without an opening <think>,
// everything before the first </think> is thoughts (a chat template that opens the thoughts in the
// prompt, as QwQ's and the R1 distills' do, served without a reasoning parser): code drafted
// there is never the candidate, and text there is never the summary.
// `lenient` (format-reward training of small models only, docs/train.md): a block of any language
// counts, and a block left open by a response cut at the token limit runs to its end.
ParsedResponse parse_response(std::string_view content, std::string_view reasoning, common::Format format,
                              bool lenient = false);

}  // namespace kernelrl::rollout
