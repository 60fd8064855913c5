// One message of a chat: what a prompt is made of (the rollout's prompts, the trajectory record's
// `messages`, the HTTP chat client's request, the tokenizer's chat template). One type for all of
// them, so a prompt goes from the rollout to the policy and the trainer without copies.
#pragma once

#include <string>

namespace kernelrl::common {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
  friend bool operator==(const Message&, const Message&) = default;
};

}  // namespace kernelrl::common
