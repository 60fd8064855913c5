#include "rollout/settings.hpp"

namespace kernelrl::rollout {

namespace {

using nlohmann::json;

// A new member of any of these structs makes its binding below fail to compile ("N names
// provided for structured binding"): describe it, or say here why it is no setting.

json describe(const rl::ScoreConfig& c) {
  const auto& [w_correct, speedup_cap] = c;
  return {{"w_correct", w_correct}, {"speedup_cap", speedup_cap ? json(*speedup_cap) : json(nullptr)}};
}

json describe(const rl::ReturnConfig& c) {
  const auto& [kind, gamma] = c;
  return {{"kind", rl::to_string(kind)}, {"gamma", gamma}};
}

json describe(const rl::AdvantageConfig& c) {
  const auto& [kind, divide_by_std, eps] = c;
  return {{"kind", rl::to_string(kind)}, {"divide_by_std", divide_by_std}, {"eps", eps}};
}

json describe_prompt(const RolloutConfig& c) {
  const auto& [gpu, max_chars, max_tokens] = c.prompt;
  return {{"templates_dir", c.templates_dir.string()},
          {"example_file", c.example_file.string()},
          {"gpu", gpu},
          {"max_chars", max_chars},
          {"max_tokens", max_tokens}};
}

}  // namespace

json describe_settings(const RolloutConfig& c) {
  [[maybe_unused]] const auto& [tasks, split, task_size, format, strategy, n_trajectories, n_turns, beam_width, score, returns,
                                advantage, templates_dir, example_file, prompt,
                                out_dir,              // where, not what: the run directory itself
                                concurrency,          // how fast: the results do not depend on it
                                max_policy_failures,  // when a run stops; a rerun resumes it
                                show_progress,        // the terminal's
                                lenient_parse] = c;
  json task_list = json::array();
  for (const auto& t : tasks) task_list.push_back(t.string());
  json run = {{"tasks", task_list},
          {"split", split},
          {"format", std::string(common::to_string(format))},
          {"strategy", to_string(strategy)},
          {"trajectories", n_trajectories},
          {"turns", n_turns},
          {"beam_width", strategy == Strategy::BEAM ? json(beam_width) : json(nullptr)},
          {"lenient_parse", lenient_parse},
          {"score", describe(score)},
          {"return", describe(returns)},
          {"advantage", describe(advantage)},
          {"prompt", describe_prompt(c)}};
  if (task_size != "full") run["task_size"] = task_size;  // absent at full size, as in runs from before sizes
  return run;
}

}  // namespace kernelrl::rollout
