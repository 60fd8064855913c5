// `kernelrl env`: the rollout's prompts, response parsing, feedback lines, scores and credit as a
// JSON-lines protocol, so that environments written in other languages (python/kernelrl_client)
// call the one implementation instead of copying it. One request object per line in, one answer
// object per line out, in order; nothing here evaluates a kernel (that is the engine's or the
// service's job) or keeps state beyond the prompt templates it has read.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "rollout/prompt.hpp"

namespace kernelrl::rollout {

// Requests (field "op"; an optional "id" is echoed in the answer):
//   prompt:  {format, task_source, turn, previous: [{code, summary, feedback}], gpu?, max_chars?,
//             prompts_dir?, example?} -> {messages: [{role, content}], n_attempts_shown, n_attempts_dropped}
//   parse:   {format, content, reasoning?, lenient?} -> {ok, parse_error (null when ok), thoughts, code, summary}
//   outcome: {parse_error?, policy_error?, result?, w_correct?, speedup_cap?}
//            -> {feedback, score, correct, speedup}  (result: the `kernelrl eval --json` record)
//   credit:  {scores: [[s, ...], ...], gamma?, return?: "sum"|"max", advantage?, divide_by_std?, eps?}
//            -> {returns, advantages}  (scores by trajectory, then turn; defaults as `kernelrl rollout`)
// A request that cannot be answered gets {"error": MESSAGE} naming the field.
class EnvProtocol {
 public:
  nlohmann::json handle(const nlohmann::json& request);

 private:
  nlohmann::json prompt(const nlohmann::json& request);
  common::Expected<const PromptTemplates*> templates(common::Format format, const std::filesystem::path& dir,
                                                     const std::filesystem::path& example);

  std::map<std::tuple<int, std::string, std::string>, PromptTemplates> templates_;  // by (format, dir, example)
};

// Reads requests from `in` until it ends, answering each on `out` (flushed per line). Returns 0.
int run_env_protocol(std::istream& in, std::ostream& out);

}  // namespace kernelrl::rollout
