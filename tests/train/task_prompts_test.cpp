// Every task's first-turn prompt, as the trainer's policy sees it (the default model's chat
// template and tokenizer), tokenizes, decodes back to the rendered text and leaves room for a
// response in the model's context.
#include <gtest/gtest.h>

#include "rollout/prompt.hpp"
#include "rollout/rollout_config.hpp"
#include "task/selection.hpp"
#include "policy/policy_model.hpp"

namespace kernelrl::train {
namespace {

const std::filesystem::path kSource = KERNELRL_SOURCE_DIR;

TEST(TaskPrompts, EveryTaskPromptTokenizesAndFitsTheDefaultModel) {
  const auto model = kSource / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  ASSERT_TRUE(std::filesystem::exists(model)) << model << " is missing: run scripts/fetch-default-model.sh";
  auto tok = policy::load_tokenizer(model);
  ASSERT_TRUE(tok) << tok.error().message;
  auto templates = rollout::load_templates(kSource / "prompts", common::Format::NATIVE,
                                           rollout::default_example_file(common::Format::NATIVE));
  ASSERT_TRUE(templates) << templates.error().message;
  auto tasks = task::select_tasks({kSource / "tasks"}, "all");
  ASSERT_TRUE(tasks) << tasks.error().message;
  std::size_t longest = 0;
  for (const auto& task : *tasks) {
    const auto built = rollout::build_prompt(*templates, task.source, {}, rollout::PromptConfig{});
    std::vector<tokenizer::ChatMessage> chat;
    for (const auto& m : built.messages) chat.push_back({m.role, m.content});
    const std::string text = tok->chat.render(chat, true);
    const auto ids = tok->tokenizer.encode(text);
    ASSERT_FALSE(ids.empty()) << task.id;
    EXPECT_EQ(tok->tokenizer.decode(ids), text) << task.id;
    longest = std::max(longest, ids.size());
  }
  std::printf("%zu task prompts, the longest %zu tokens\n", tasks->size(), longest);
  EXPECT_LT(longest, 8192u - 1024u);  // SmolLM2's context, with room for a response
}

}  // namespace
}  // namespace kernelrl::train
