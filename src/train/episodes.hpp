// The training samples of one rollout: every finished turn of its trajectories.jsonl with the
// prompt the model saw (messages, earlier thoughts already dropped by the prompt builder), the
// tokens it sampled and the turn's advantage, plus what the step log reports about them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "tokenizer/chat_template.hpp"

namespace kernelrl::train {

struct Episode {
  std::string task;
  int trajectory = 0;
  int turn = 1;
  std::vector<tokenizer::ChatMessage> messages;  // the prompt as the policy received it
  std::vector<std::int64_t> response_ids;        // sampled tokens (empty: no response)
  std::vector<double> response_logprobs;         // the sampler's log-prob of each (empty: not recorded)
  std::optional<double> advantage;               // none until the task's group completed
  double score = 0;
  bool correct = false;
  double speedup = 0;          // when correct
  std::string status;          // engine status, PARSE_ERROR, POLICY_ERROR or PROMPT_TOO_LONG (never sent)
  bool truncated = false;      // the response hit max_new_tokens
};

// Reads `run_dir`/trajectories.jsonl (docs/trajectories.md), applying update records. Errors name
// the file and line.
common::Expected<std::vector<Episode>> read_episodes(const std::filesystem::path& run_dir);

// A response the step log counts as degenerate: none at all, unparsable, or cut at the token limit.
// A prompt that was never sent (PROMPT_TOO_LONG) is not the model's answer: see is_unanswered.
bool is_degenerate(const Episode& e);

// The prompt did not fit the policy's context: no response, no score, no advantage.
bool is_unanswered(const Episode& e);

}  // namespace kernelrl::train
