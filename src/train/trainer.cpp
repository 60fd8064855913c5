#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include <torch/torch.h>

#include "common/clock.hpp"
#include "common/fs.hpp"
#include "rollout/run_dir.hpp"
#include "rollout/runner.hpp"
#include "task/selection.hpp"
#include "train/episodes.hpp"
#include "train/format_reward.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {

namespace {

namespace fs = std::filesystem;
using common::make_error;
using nlohmann::json;

common::Fallible check(const TrainConfig& c) {
  if (c.model.empty()) return make_error("--model: a .gguf file or a Hugging Face folder is needed");
  if (c.run_dir.empty()) return make_error("--out: the run directory is needed");
  if (c.n_steps < 0 || (c.n_steps == 0 && !c.heldout.enabled())) {
    return make_error("--steps must be at least 1, or 0 with --heldout-split to evaluate the model only (got " +
                      std::to_string(c.n_steps) + ")");
  }
  if (c.tasks_per_step < 1) return make_error("--tasks-per-step must be at least 1");
  if (!(c.lr > 0)) return make_error("--lr must be positive");
  if (!(c.policy.sampling.temperature > 0)) {
    return make_error("--temperature must be positive: greedy decoding has no sampling distribution to train on");
  }
  if (c.reward != "kernel" && c.reward != "format") return make_error("--reward '" + c.reward + "': expected kernel or format");
  if (c.update.n_minibatches < 1) return make_error("--minibatches must be at least 1");
  if (!(c.update.grpo.kl_coef >= 0)) return make_error("--kl-coef must not be negative");
  if (!(c.update.max_grad_norm > 0)) return make_error("--max-grad-norm must be positive");
  if (c.update.grpo.max_response_tokens < 1) return make_error("the Dr. GRPO length must be at least 1");
  return check(c.heldout);
}

std::string step_name(int step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%05d", step);
  return buf;
}

// The tasks of step `step`: the task list in a seeded order, reshuffled every pass over it.
std::vector<fs::path> tasks_of_step(const std::vector<task::SelectedTask>& tasks, int per_step, int step,
                                    std::uint64_t seed) {
  std::vector<fs::path> out;
  const std::size_t n = tasks.size();
  std::vector<std::size_t> order(n);
  std::size_t order_pass = static_cast<std::size_t>(-1);  // the pass `order` was shuffled for
  for (int k = 0; k < per_step && static_cast<std::size_t>(k) < n; ++k) {
    const std::size_t global = static_cast<std::size_t>(step) * per_step + k;
    const std::size_t pass = global / n;
    if (pass != order_pass) {
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(seed * 1000003ull + pass);
      std::shuffle(order.begin(), order.end(), rng);
      order_pass = pass;
    }
    out.push_back(tasks[order[global % n]].given);  // the runner sizes it (--size)
  }
  return out;
}

// A run directory's train.json must hold the same settings (the number of steps may grow).
// Writes nothing: train.json is written once the model has loaded, so a run that could not start
// (a wrong --model, say) does not pin its settings on the directory.
// What train.json holds: every setting (describe), the evaluator's (options, rules, device, GPU)
// and the content digests of the files the samples depend on.
common::Expected<json> run_settings(const TrainConfig& c, const rollout::Evaluator& scorer) {
  json settings = describe(c);
  settings["evaluator"] = scorer.settings();
  auto files = describe_files(c);
  if (!files) return files.error();
  settings["files"] = std::move(*files);
  return settings;
}

common::Fallible check_run_settings(const TrainConfig& c, json want) {
  const fs::path file = c.run_dir / "train.json";
  if (!fs::exists(file)) return common::Ok{};
  auto text = common::read_file(file);
  if (!text) return text.error();
  auto have = json::parse(*text, nullptr, false);
  if (have.is_discarded() || !have.is_object()) return make_error(file.string() + ": not a JSON object");
  have.erase("n_steps");  // a run may be extended
  want.erase("n_steps");
  if (auto same = rollout::check_same_settings(have, want); !same) {
    return make_error(file.string() + ": " + same.error().message);
  }
  return common::Ok{};
}

common::Fallible write_run_settings(const TrainConfig& c, const json& settings) {
  std::error_code ec;
  fs::create_directories(c.run_dir, ec);
  if (ec) return make_error(c.run_dir.string() + ": cannot create: " + ec.message());
  return common::write_file_atomic(c.run_dir / "train.json", settings.dump(2) + "\n");
}

struct RunState {
  int steps_done = 0;
  fs::path checkpoint;  // empty: none yet
};

RunState read_state(const fs::path& run_dir) {
  RunState s;
  auto text = common::read_file(run_dir / "train_state.json");
  if (!text) return s;
  auto j = json::parse(*text, nullptr, false);
  if (j.is_object()) {
    s.steps_done = j.value("steps_done", 0);
    if (j.contains("checkpoint") && j["checkpoint"].is_string()) s.checkpoint = run_dir / j["checkpoint"].get<std::string>();
  }
  return s;
}

// A step's checkpoint (weights and optimizer) under checkpoints/, not yet the run's: train_state.json
// names it only once the step's log line is written (commit_step).
common::Fallible save_checkpoint(const TrainConfig& c, policy::PolicyModel& policy, torch::optim::Optimizer& optimizer,
                                 int steps_done) {
  const fs::path dir = c.run_dir / "checkpoints" / step_name(steps_done);
  if (auto s = weights::save_hf_checkpoint(dir, policy.model->config(), policy.model->state(), "float32"); !s) return s;
  try {
    torch::save(optimizer, (dir / "optimizer.pt").string());
  } catch (const c10::Error& e) {
    return make_error(dir.string() + "/optimizer.pt: " + e.what_without_backtrace());
  }
  return common::Ok{};
}

// Makes step `steps_done` the run's (its log line is already written), then drops the previous
// checkpoint. A run killed before this redoes the step, and its resume drops that step's log line.
common::Fallible commit_step(const TrainConfig& c, int steps_done, const RunState& previous) {
  const std::string name = "checkpoints/" + step_name(steps_done);
  json state = {{"steps_done", steps_done}, {"checkpoint", name}};
  if (auto s = common::write_file_atomic(c.run_dir / "train_state.json", state.dump(2) + "\n"); !s) return s;
  if (!previous.checkpoint.empty() && previous.checkpoint != c.run_dir / name) (void)common::remove_tree(previous.checkpoint);
  return common::Ok{};
}

// What the step log reports of a step's turns, as sums (and a maximum) that add up over ranks.
struct EpisodeTotals {
  double n_episodes = 0, n_answered = 0;  // the model's outcomes: prompts over the context were never its to answer,
  double n_no_response = 0;               // nor turns the policy gave no response to
  double reward = 0, reward_max = 0, correct = 0, speedup = 0, tokens = 0, degenerate = 0;
};

EpisodeTotals totals_of(const std::vector<trajectory::TurnRecord>& episodes) {
  EpisodeTotals t;
  t.n_episodes = static_cast<double>(episodes.size());
  for (const auto& e : episodes) {
    t.n_no_response += is_no_response(e);
    if (is_unanswered(e)) continue;
    ++t.n_answered;
    t.reward += e.score;
    t.reward_max = std::max(t.reward_max, e.score);
    t.correct += e.correct;
    t.speedup += e.correct ? e.speedup.value_or(0.0) : 0;
    t.tokens += static_cast<double>(e.response.token_ids ? e.response.token_ids->size() : 0);
    t.degenerate += is_degenerate(e);
  }
  return t;
}

// The whole step's totals: the sums over the ranks (the rank's own without a group).
common::Fallible reduce_totals(EpisodeTotals& t, RankGroup* ranks) {
  if (!ranks) return common::Ok{};
  std::vector<double> sums = {t.n_episodes, t.n_answered, t.n_no_response, t.reward, t.correct, t.speedup, t.tokens, t.degenerate};
  if (auto s = ranks->sum_values(sums); !s) return s;
  std::vector<double> maxima = {t.reward_max};
  if (auto s = ranks->max_values(maxima); !s) return s;
  t = {sums[0], sums[1], sums[2], sums[3], maxima[0], sums[4], sums[5], sums[6], sums[7]};
  return common::Ok{};
}

json step_metrics(int step, const EpisodeTotals& t, const UpdateStats& u, double rollout_s, double update_s, int n_batches) {
  const double n = std::max<double>(1, t.n_answered);
  return {{"step", step},
          {"n_episodes", static_cast<std::int64_t>(t.n_episodes)},
          {"rollout/n_prompts_too_long", static_cast<int>(t.n_episodes - t.n_answered - t.n_no_response)},
          {"rollout/n_no_response", static_cast<int>(t.n_no_response)},
          {"reward/mean", t.reward / n},
          {"reward/max", t.reward_max},
          {"eval/correct_rate", t.correct / n},
          {"eval/mean_speedup_correct", t.correct > 0 ? t.speedup / t.correct : 0.0},
          {"response/mean_tokens", t.tokens / n},
          {"response/degenerate_frac", t.degenerate / n},
          {"train/loss", u.loss},
          {"train/clip_frac", u.clip_frac},
          {"train/approx_kl", u.approx_kl},
          {"train/kl_to_ref", u.kl_to_ref},
          {"train/entropy", u.entropy},
          {"train/grad_norm", u.grad_norm},
          {"train/n_samples", u.n_samples},
          {"train/n_tokens", u.n_tokens},
          {"train/sampler_logprob_diff_mean", u.sampler_logprob_diff_mean},
          {"train/sampler_logprob_diff_max", u.sampler_logprob_diff_max},
          {"train/tis_weight_mean", u.tis_weight},
          {"train/tis_capped_frac", u.tis_capped_frac},
          {"train/optimizer_steps", u.n_optimizer_steps},
          {"time/rollout_s", rollout_s},
          {"time/update_s", update_s},
          {"policy/sampler_batches", n_batches}};
}

// Where this rank's samples stand in the step's whole batch: every rank's sample keys exchanged.
common::Expected<GlobalPlacement> place_in_step(const std::vector<SampleKey>& keys, RankGroup& ranks) {
  auto texts = ranks.all_gather(keys_to_text(keys));
  if (!texts) return texts.error();
  std::vector<std::vector<SampleKey>> keys_by_rank;
  for (const auto& text : *texts) {
    auto parsed = keys_from_text(text);
    if (!parsed) return parsed.error();
    keys_by_rank.push_back(std::move(*parsed));
  }
  return place_samples(keys_by_rank, ranks.rank_info().rank);
}

// Drops the log lines of steps after `steps_done`: written by a run killed before it recorded the
// step as done (the line comes first), they are written again when the step is redone.
common::Fallible trim_log_after(const fs::path& run_dir, int steps_done) {
  const fs::path path = run_dir / "train_log.jsonl";
  if (!fs::exists(path)) return common::Ok{};
  auto text = common::read_file(path, 1ull << 30);
  if (!text) return text.error();
  std::istringstream lines(*text);
  std::string line, kept;
  bool dropped = false;
  while (std::getline(lines, line)) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("step") && j["step"].is_number_integer() && j["step"].get<int>() > steps_done) {
      dropped = true;
      continue;
    }
    kept += line + "\n";
  }
  return dropped ? common::write_file_atomic(path, kept) : common::Ok{};
}

common::Fallible append_log_line(const fs::path& run_dir, const json& line) {
  std::ofstream log(run_dir / "train_log.jsonl", std::ios::app);
  log << line.dump() << "\n";
  if (!log) return make_error((run_dir / "train_log.jsonl").string() + ": cannot append");
  return common::Ok{};
}

// What the rollouts sample from: the model being trained through `own`, or run_training's
// external sampler. Reseeding restarts the model's seed sequence (an external sampler has its own).
struct Sampler {
  policy::LocalPolicy& own;
  policy::Policy* external = nullptr;
  policy::Policy& policy() { return external ? *external : own; }
  void reseed(std::uint64_t seed) { own.reseed(seed); }
  int n_batches() const { return own.n_batches(); }  // the model's sampler calls (none with an external one)
};

// An external sampler's answer as the model's own sample (trainer.hpp, run_training): without
// token ids, its content encoded by the model's tokenizer, ending with the end-of-turn token when
// it stopped (as the model's samples end); its log-probs, not of those tokens, dropped.
void tokenize_answer(const policy::PolicyModel& model, trajectory::Response& response) {
  if (response.token_ids || response.content.empty()) return;
  const std::vector<std::int32_t> ids = model.tokenizer.encode(response.content);
  std::vector<std::int64_t> tokens(ids.begin(), ids.end());
  if (response.finish_reason == "stop") {
    if (auto end = model.chat.end_of_turn_id(model.tokenizer)) tokens.push_back(*end);
  }
  response.token_ids = std::move(tokens);
  response.logprobs.reset();
}

// A rollout of the run's settings over `tasks` (files as given: the runner sizes them), m x n per
// task, into `out_dir`, every trajectory at once (their prompts batched into the sampler).
rollout::RolloutConfig rollout_over(const TrainConfig& c, std::vector<fs::path> tasks, fs::path out_dir,
                                    int n_trajectories, int n_turns) {
  rollout::RolloutConfig rc = c.rollout;
  rc.tasks = std::move(tasks);
  rc.out_dir = std::move(out_dir);
  rc.n_trajectories = n_trajectories;
  rc.n_turns = n_turns;
  rc.concurrency = std::max(rc.concurrency, n_trajectories * static_cast<int>(rc.tasks.size()));
  rc.lenient_parse = c.reward == "format";  // docs/train.md: any code block earns the format reward's base
  return rc;
}

// A held-out set: the near one (the held-out split of --tasks) or the far one
// (HeldOutConfig::far_tasks), each with its folder under RUN and its log keys' prefix.
struct HeldOutSet {
  std::string folder;  // heldout, heldout-far
  std::string prefix;  // heldout, heldout_far
  std::string split;   // what its rollout selects
  std::vector<task::SelectedTask> tasks;
};

// The held-out evaluation of the policy after `steps_done` steps (train/heldout.hpp): a rollout of
// each set's tasks into RUN/<folder>/step-NNNNN/ (resumed like any rollout when a killed run comes
// back to it), with the held-out seed, whatever the step; the sets' metrics in one object.
common::Expected<json> evaluate_heldout(const TrainConfig& c, const std::vector<HeldOutSet>& sets, Sampler& sampler,
                                        rollout::Evaluator& scorer, int steps_done) {
  json all = json::object();
  for (const HeldOutSet& set : sets) {
    std::vector<fs::path> files;
    for (const auto& t : set.tasks) files.push_back(t.given);
    rollout::RolloutConfig rc = rollout_over(c, std::move(files), c.run_dir / set.folder / step_name(steps_done),
                                             c.heldout.n_trajectories, c.heldout.n_turns);
    rc.split = set.split;
    rc.strategy = rollout::Strategy::MXN;
    sampler.reseed(c.heldout.seed);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<trajectory::TurnRecord> records;
    auto rolled = rollout::RolloutRunner(rc, sampler.policy(), scorer).run(&records);
    if (!rolled) {
      return make_error(set.folder + " evaluation after step " + std::to_string(steps_done) + ": " + rolled.error().message);
    }
    json metrics = heldout_metrics(records, set.prefix);
    const std::string p = set.prefix + "/";
    const double seconds = common::seconds_since(t0);
    metrics["time/" + set.prefix + "_s"] = seconds;
    std::fprintf(stderr, "%s after step %d: correct %.3f (turn 1 %.3f), tasks solved %.3f, mean speedup of correct %.3f, %.1f s\n",
                 set.folder.c_str(), steps_done, metrics[p + "correct_rate"].get<double>(),
                 metrics[p + "turn1_correct_rate"].get<double>(), metrics[p + "tasks_solved_frac"].get<double>(),
                 metrics[p + "mean_speedup_correct"].get<double>(), seconds);
    all.update(metrics);
  }
  return all;
}

// The held-out sets of a run: none without --heldout-split; the far one only with --heldout-far,
// none of whose tasks may be trained on or be one of the near held-out ones (its numbers would
// not be far then).
common::Expected<std::vector<HeldOutSet>> heldout_sets(const TrainConfig& c, const std::vector<task::SelectedTask>& trained) {
  std::vector<HeldOutSet> sets;
  if (!c.heldout.enabled()) return sets;
  auto near = task::select_tasks(c.rollout.tasks, c.heldout.split, c.rollout.task_size);
  if (!near) return make_error("--heldout-split " + c.heldout.split + ": " + near.error().message);
  sets.push_back({"heldout", "heldout", c.heldout.split, std::move(*near)});
  if (c.heldout.far_tasks.empty()) return sets;
  auto far = task::select_tasks(c.heldout.far_tasks, "all", c.rollout.task_size);
  if (!far) return make_error("--heldout-far: " + far.error().message);
  const std::pair<const std::vector<task::SelectedTask>*, const char*> others[] = {
      {&trained, "a training task"}, {&sets.front().tasks, "a near held-out task"}};
  for (const auto& f : *far) {
    for (const auto& [other, what] : others) {
      for (const auto& t : *other) {
        if (t.id == f.id) {
          return make_error("--heldout-far: " + f.given.string() + " is also " + what + " (" + t.given.string() +
                            "): far tasks must be unlike both");
        }
      }
    }
  }
  sets.push_back({"heldout-far", "heldout_far", "all", std::move(*far)});
  return sets;
}

}  // namespace

common::Expected<TrainSummary> run_training(const TrainConfig& config, rollout::Evaluator* evaluator,
                                            policy::Policy* external_sampler, RankGroup* ranks) {
  if (auto s = check(config); !s) return s.error();
  const RankInfo rank = ranks ? ranks->rank_info() : RankInfo{};
  const bool writes_run = rank.rank == 0;  // train.json, the log, checkpoints, run state, held-out
  if (config.reward == "kernel" && evaluator == nullptr) return make_error("reward 'kernel' needs the engine");
  // Selected at the run's size here, so that a task lacking it is named before the model loads;
  // each rollout gets the files as given and sizes them itself.
  auto tasks = task::select_tasks(config.rollout.tasks, config.rollout.split, config.rollout.task_size);
  if (!tasks) return tasks.error();
  auto sets = heldout_sets(config, *tasks);
  if (!sets) return sets.error();
  FormatRewardEvaluator format_reward;
  rollout::Evaluator& scorer = config.reward == "format" ? static_cast<rollout::Evaluator&>(format_reward) : *evaluator;
  auto settings = run_settings(config, scorer);
  if (!settings) return settings.error();
  if (auto s = check_run_settings(config, *settings); !s) return s.error();

  RunState state = read_state(config.run_dir);
  TrainSummary summary;
  summary.steps_done_before = state.steps_done;
  const fs::path start = state.checkpoint.empty() ? config.model : state.checkpoint;
  const fs::path tokenizer = config.tokenizer.empty() ? config.model : config.tokenizer;
  auto policy = policy::load_policy_model(start, tokenizer, config.device);
  if (!policy) return policy.error();
  // The rollouts describe the policy by the run's starting model, whatever checkpoint of it a resumed
  // run loaded: a step (or held-out evaluation) cut short resumes under the same description (the
  // run's train.json is what guards the settings).
  policy->source = config.model;
  policy->model->set_activation_checkpointing(config.activation_checkpointing);
  policy->model->eval();
  UpdateModels models{policy->model, nullptr, policy->bf16_autocast};
  std::optional<policy::PolicyModel> reference;  // the KL term's: the starting policy, also when resuming
  if (config.update.grpo.kl_coef > 0) {
    auto loaded = policy::load_policy_model(config.model, tokenizer, config.device);
    if (!loaded) return make_error("the KL reference: " + loaded.error().message);
    reference = std::move(*loaded);
    for (auto& p : reference->model->parameters()) p.set_requires_grad(false);
    reference->model->eval();
    models.reference = reference->model;
  }
  torch::optim::AdamW optimizer(policy->model->parameters(), torch::optim::AdamWOptions(config.lr)
                                                                 .weight_decay(config.weight_decay)
                                                                 .betas({config.adam_beta1, config.adam_beta2}));
  if (!state.checkpoint.empty() && fs::exists(state.checkpoint / "optimizer.pt")) {
    try {
      torch::load(optimizer, (state.checkpoint / "optimizer.pt").string());
    } catch (const c10::Error& e) {
      return make_error((state.checkpoint / "optimizer.pt").string() + ": " + e.what_without_backtrace());
    }
  }
  if (writes_run) {
    if (auto s = write_run_settings(config, *settings); !s) return s.error();
    if (auto s = trim_log_after(config.run_dir, state.steps_done); !s) return s.error();
  }
  policy::LocalPolicyConfig policy_config = config.policy;
  policy_config.sampling.seed = config.seed;
  policy::LocalPolicy own_sampler(*policy, policy_config);
  Sampler sampler{own_sampler, external_sampler};

  // The configured batch: every step samples m x n turns of the same number of tasks.
  const auto batch_samples = static_cast<std::int64_t>(std::min<std::size_t>(config.tasks_per_step, tasks->size())) *
                             config.rollout.n_trajectories * config.rollout.n_turns;
  // The starting policy's held-out line (step 0), unless a killed run already wrote it.
  if (writes_run && state.steps_done == 0 && heldout_due(config.heldout, 0, config.n_steps) &&
      !fs::exists(config.run_dir / "heldout" / step_name(0) / "metrics.json")) {
    auto metrics = evaluate_heldout(config, *sets, sampler, scorer, 0);
    if (!metrics) return metrics.error();
    json line = {{"step", 0}};
    line.update(*metrics);
    if (auto s = append_log_line(config.run_dir, line); !s) return s.error();
    if (auto s = common::write_file_atomic(config.run_dir / "heldout" / step_name(0) / "metrics.json", line.dump(2) + "\n"); !s) {
      return s.error();
    }
  }
  for (int step = state.steps_done; step < config.n_steps; ++step) {
    // The step's groups (tasks), whole, shared out among the ranks; each rank's rollout is its own
    // shard of the step's trajectories.
    std::vector<fs::path> step_tasks = tasks_of_step(*tasks, config.tasks_per_step, step, config.seed);
    fs::path step_dir = config.run_dir / "steps" / step_name(step + 1);
    if (ranks) {
      const Share share = rank_share(step_tasks.size(), rank);
      step_tasks = std::vector<fs::path>(step_tasks.begin() + static_cast<std::ptrdiff_t>(share.begin),
                                         step_tasks.begin() + static_cast<std::ptrdiff_t>(share.end));
      step_dir /= "rank-" + std::to_string(rank.rank);
    }
    const bool has_tasks = !step_tasks.empty();  // more ranks than the step's tasks: some have none
    const rollout::RolloutConfig rc =
        rollout_over(config, std::move(step_tasks), step_dir, config.rollout.n_trajectories, config.rollout.n_turns);
    sampler.reseed(config.seed + 7919ull * step);
    const auto t0 = std::chrono::steady_clock::now();
    const int batches_before = sampler.n_batches();
    std::vector<trajectory::TurnRecord> episodes;  // the step's records, a resumed step's earlier ones included
    if (has_tasks) {
      auto rolled = rollout::RolloutRunner(rc, sampler.policy(), scorer).run(&episodes);
      if (!rolled) return make_error("step " + std::to_string(step + 1) + ": rollout: " + rolled.error().message);
    }
    const double rollout_s = common::seconds_since(t0);
    const int step_batches = sampler.n_batches() - batches_before;
    if (external_sampler) {
      for (auto& e : episodes) tokenize_answer(*policy, e.response);
    }
    // The update's seeded split into minibatches starts from this order: by task, trajectory and
    // turn, not the order the turns finished in (which follows the evaluator's speed), so a step's
    // update is the same whichever evaluator scored it.
    std::sort(episodes.begin(), episodes.end(), [](const trajectory::TurnRecord& a, const trajectory::TurnRecord& b) {
      return std::tie(a.task, a.trajectory, a.turn) < std::tie(b.task, b.trajectory, b.turn);
    });
    std::vector<TrainingSample> samples;
    std::vector<SampleKey> keys;  // in the same order
    for (const auto& e : episodes) {
      if (!e.advantage || !e.response.token_ids || e.response.token_ids->empty()) continue;
      samples.push_back({policy->prompt_ids(e.messages), *e.response.token_ids, *e.advantage,
                         e.response.logprobs.value_or(std::vector<double>{})});
      keys.push_back({e.task, e.trajectory, e.turn});
    }
    std::optional<RankBatch> rank_batch;  // data parallel: this rank's part of the whole batch
    if (ranks) {
      auto placement = place_in_step(keys, *ranks);
      if (!placement) return make_error("step " + std::to_string(step + 1) + ": " + placement.error().message);
      rank_batch = RankBatch{ranks, std::move(*placement)};
    }
    if (writes_run) {
      std::fprintf(stderr, "step %d/%d: rollout done in %.1f s; updating on %zu samples\n", step + 1, config.n_steps,
                   rollout_s, rank_batch ? rank_batch->placement.n_samples : samples.size());
    }
    const auto t1 = std::chrono::steady_clock::now();
    UpdateConfig update = config.update;
    update.temperature = config.policy.sampling.temperature;  // log-probs under the distribution sampled from
    update.n_batch_samples = batch_samples;                   // Dr. GRPO's constant, whatever carries signal
    auto stats = update_policy(models, optimizer, std::move(samples), update, config.seed + step,
                               rank_batch ? &*rank_batch : nullptr);
    if (!stats) return make_error("step " + std::to_string(step + 1) + ": " + stats.error().message);
    const double update_s = common::seconds_since(t1);
    // Evaluated before the checkpoint: a run killed here redoes the step (its rollout and the
    // held-out one resume from their files) instead of losing the held-out point.
    json heldout;
    if (writes_run && heldout_due(config.heldout, step + 1, config.n_steps)) {
      auto metrics = evaluate_heldout(config, *sets, sampler, scorer, step + 1);
      if (!metrics) return metrics.error();
      heldout = std::move(*metrics);
    }
    EpisodeTotals totals = totals_of(episodes);
    std::vector<double> batches = {static_cast<double>(step_batches)};  // the sampler calls of every rank
    if (ranks) {
      if (auto s = reduce_totals(totals, ranks); !s) return make_error("step " + std::to_string(step + 1) + ": " + s.error().message);
      if (auto s = ranks->sum_values(batches); !s) return make_error("step " + std::to_string(step + 1) + ": " + s.error().message);
    }
    json metrics = step_metrics(step + 1, totals, *stats, rollout_s, update_s, static_cast<int>(batches[0]));
    if (heldout.is_object()) metrics.update(heldout);
    if (writes_run) {  // the checkpoint, then the log line, then the state that makes them the run's
      if (auto s = save_checkpoint(config, *policy, optimizer, step + 1); !s) {
        return make_error("step " + std::to_string(step + 1) + ": checkpoint: " + s.error().message);
      }
      if (auto s = append_log_line(config.run_dir, metrics); !s) return s.error();
      if (auto s = commit_step(config, step + 1, state); !s) {
        return make_error("step " + std::to_string(step + 1) + ": checkpoint: " + s.error().message);
      }
      state = read_state(config.run_dir);
    }
    const double reward = metrics["reward/mean"].get<double>();
    if (summary.steps_run == 0) summary.first_reward = reward;
    summary.last_reward = reward;
    ++summary.steps_run;
    if (writes_run) std::fprintf(stderr, "step %d/%d: reward %.4f, correct %.3f, %lld samples trained, grad norm %.4f, rollout %.1f s, update %.1f s\n",
                 step + 1, config.n_steps, reward, metrics["eval/correct_rate"].get<double>(),
                 static_cast<long long>(stats->n_samples), stats->grad_norm, rollout_s, update_s);
  }
  if (ranks) {  // no rank leaves (tearing down the group) while rank 0 still writes the last step
    if (auto s = ranks->barrier(); !s) return s.error();
  }
  return summary;
}

}  // namespace kernelrl::train
