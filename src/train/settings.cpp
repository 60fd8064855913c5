// train.json: every setting of a TrainConfig, taken apart member by member with structured
// bindings (as rollout/settings.cpp does for the rollout's), so that a setting added to any of
// the trainer's config structs does not compile until it is described here, or named as no
// setting with the reason. A resumed run must match all of it but n_steps.
#include "train/trainer.hpp"

#include <algorithm>
#include <filesystem>

#include "common/hash.hpp"
#include "rollout/settings.hpp"

namespace kernelrl::train {

namespace {

using nlohmann::json;

json describe(const GrpoConfig& c) {
  const auto& [eps_low, eps_high, kl_coef, max_response_tokens, tis_cap] = c;
  return {{"eps_low", eps_low}, {"eps_high", eps_high}, {"kl_coef", kl_coef}, {"loss_length", max_response_tokens},
          {"tis_cap", tis_cap}};
}

json describe(const UpdateConfig& c) {
  [[maybe_unused]] const auto& [grpo, temperature,  // set from the sampling temperature by the trainer
                                n_minibatches,
                                n_batch_samples,     // set from the rollout's shape by the trainer
                                max_grad_norm,
                                micro_batch_tokens,  // memory only: micro-batches add up to the same step
                                skip_zero_advantage] = c;
  return {{"grpo", describe(grpo)},
          {"minibatches", n_minibatches},
          {"max_grad_norm", max_grad_norm},
          {"skip_zero_advantage", skip_zero_advantage}};
}

json describe(const policy::LocalPolicyConfig& c) {
  [[maybe_unused]] const auto& [sampling, max_batch, batch_wait_ms] = c;  // batching: speed only
  [[maybe_unused]] const auto& [temperature, top_p, max_new_tokens,
                                stop_strings,    // the model's own (end of turn, eos), added by policy::LocalPolicy
                                stop_token_ids,  // the same
                                seed,            // set from TrainConfig::seed for every step
                                cuda_graphs] = sampling;  // the same tokens up to floating-point ties
  return {{"temperature", temperature}, {"top_p", top_p}, {"max_new_tokens", max_new_tokens}};
}

}  // namespace

json describe(const TrainConfig& c) {
  [[maybe_unused]] const auto& [model_path, tokenizer_path,
                                device,  // where the policy runs, not what it learns
                                run_dir,  // the run itself
                                n_steps, tasks_per_step, seed, lr, weight_decay, adam_beta1, adam_beta2,
                                activation_checkpointing,  // memory only: the gradients are the same
                                reward, rollout_config, policy_config, update_config, heldout] = c;
  const auto& [heldout_split, heldout_every, heldout_m, heldout_n, heldout_seed, heldout_far] = heldout;
  json heldout_settings = {{"split", heldout_split}, {"every", heldout_every}, {"trajectories", heldout_m},
                           {"turns", heldout_n}, {"seed", heldout_seed}};
  if (!heldout_far.empty()) {  // absent without far tasks, as in runs from before them
    json far = json::array();
    for (const auto& t : heldout_far) far.push_back(t.string());
    heldout_settings["far_tasks"] = std::move(far);
  }
  return {{"model", model_path.string()},
          {"tokenizer", tokenizer_path.string()},
          {"n_steps", n_steps},
          {"tasks_per_step", tasks_per_step},
          {"seed", seed},
          {"reward", reward},
          {"optimizer", {{"lr", lr}, {"weight_decay", weight_decay}, {"adam_betas", {adam_beta1, adam_beta2}}}},
          {"rollout", rollout::describe_settings(rollout_config)},
          {"policy", describe(policy_config)},
          {"update", describe(update_config)},
          {"heldout", heldout_settings}};
}

namespace {

// A file's digest, or {relative path with '_' for '.': digest} over a folder's files; null for no path.
common::Expected<json> digest_of(const std::filesystem::path& path, const std::string& what) {
  namespace fs = std::filesystem;
  if (path.empty()) return json(nullptr);
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    const std::string h = common::hash_file_hex(path.string());
    if (h.empty()) return common::make_error(what + ": " + path.string() + ": cannot be read");
    return json(h);
  }
  if (!fs::is_directory(path, ec)) return common::make_error(what + ": " + path.string() + ": no such file or folder");
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  if (ec) return common::make_error(what + ": " + path.string() + ": cannot be listed: " + ec.message());
  std::sort(files.begin(), files.end());
  json out = json::object();
  for (const auto& f : files) {
    const std::string h = common::hash_file_hex(f.string());
    if (h.empty()) return common::make_error(what + ": " + f.string() + ": cannot be read");
    std::string key = fs::relative(f, path).generic_string();
    std::replace(key.begin(), key.end(), '.', '_');  // a dot separates the fields a refusal names
    out[key] = h;
  }
  return out;
}

}  // namespace

common::Expected<json> describe_files(const TrainConfig& c) {
  json out = json::object();
  for (const auto& [key, path, what] : {std::tuple{"model", c.model, "--model"},
                                        std::tuple{"tokenizer", c.tokenizer, "--tokenizer"},
                                        std::tuple{"templates", c.rollout.templates_dir, "--prompts"},
                                        std::tuple{"example", c.rollout.example_file, "the one-shot example"}}) {
    auto d = digest_of(path, what);
    if (!d) return d.error();
    out[key] = std::move(*d);
  }
  return out;
}

}  // namespace kernelrl::train
