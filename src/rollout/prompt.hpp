// Multi-turn prompts per the recipe (DESIGN.md): the base prompt (task source, the format's rules
// and ABI, the target GPU), a one-shot example in turn 1 only, then the previous attempts (code,
// the model's own summary, one feedback line by outcome) and the instruction to restart. Earlier
// turns' thoughts are never included; attempts that do not fit the budget are dropped oldest
// first. The texts are files under prompts/ that users can edit.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "common/status.hpp"
#include "eval/result.hpp"
#include "policy/policy.hpp"
#include "trajectory/record.hpp"

namespace kernelrl::rollout {

// A prompt message, as the trajectory records it.
using Message = trajectory::Message;

struct PromptTemplates {
  std::string system, base, format_rules, one_shot, attempt, previous_attempts, restart;
  std::string example;   // the one-shot example answer: the example file fenced, then its summary
  std::string language;  // fence language of the format ("cuda", "cpp", "python")
};

// Reads the templates for `format` from `dir` (system.txt, base.txt, format_<format>.txt,
// one_shot.txt, attempt.txt, previous_attempts.txt, restart.txt, and example_summary_<format>.txt,
// the sentences shown under the one-shot example as its summary) and the one-shot example file.
// Errors name the missing or unreadable file.
common::Expected<PromptTemplates> load_templates(const std::filesystem::path& dir, common::Format format,
                                                 const std::filesystem::path& example_file);

// One earlier turn as the next prompt shows it: no thoughts.
struct Attempt {
  std::string code;
  std::string summary;
  std::string feedback;  // from feedback_line()
};

// The one feedback line for an outcome: parse error, rejection, compile error (with the compiler
// excerpt), runtime error or timeout, incorrect (with the mismatch), or correct with the speedup.
// The candidate's file is named candidate.EXT in it, whatever name the caller evaluated it under.
std::string feedback_line(const std::optional<std::string>& parse_error, const eval::EvalResult& result);

// The feedback line of a turn the policy gave no response to (after its retries): "no response: ERROR".
std::string no_response_line(const std::string& policy_error);

struct PromptConfig {
  std::string gpu = "an NVIDIA H200";  // named in the base prompt
  std::size_t max_chars = 96000;       // budget for all messages in characters (0: none); older attempts go first
  std::size_t max_tokens = 0;          // budget in the policy's tokens, below its own limit (0: the
                                       // policy's limit alone); needs a policy that counts tokens
};

struct BuiltPrompt {
  std::vector<Message> messages;
  int n_attempts_shown = 0;
  int n_attempts_dropped = 0;
  std::optional<std::size_t> n_tokens;  // with a token budget: what the messages take
  bool fits = true;  // false: over the token budget even without any earlier attempt
};

// The prompt of a turn given the earlier attempts of its trajectory, oldest first (none: turn 1).
// Every turn's prompt starts as turn 1's, the one-shot example included, so a model trained on
// first turns meets the prompt it knows with the attempts added. Attempts are dropped, oldest
// first, until the prompt fits config.max_chars and, given `tokens`, its budget.
BuiltPrompt build_prompt(const PromptTemplates& templates, const std::string& task_source,
                         const std::vector<Attempt>& previous, const PromptConfig& config = {},
                         const policy::TokenBudget* tokens = nullptr);

// Replaces every {name} of the template `text` with its value, in one pass (values are not
// scanned for further names).
std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace kernelrl::rollout
