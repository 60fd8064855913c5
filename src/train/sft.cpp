#include "train/sft.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "common/clock.hpp"
#include "common/fs.hpp"
#include "common/provenance.hpp"
#include "task/selection.hpp"
#include "train/episodes.hpp"
#include "train/sft_refinement.hpp"
#include "policy/policy_model.hpp"
#include "train/update.hpp"
#include "weights/checkpoint.hpp"

namespace kernelrl::train {

namespace fs = std::filesystem;
using common::make_error;
using nlohmann::json;

namespace {

// The solution's own approach ("// Approach: ..." in its first lines), as the answer's summary.
std::string approach_of(const std::string& code) {
  const std::string marker = "Approach: ";
  const auto at = code.find(marker);
  if (at == std::string::npos || at > 2000) return "A direct kernel for the operation, launched on the given stream.";
  const auto end = code.find('\n', at);
  std::string text = code.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
  if (const auto written = text.find(" Written by"); written != std::string::npos) text.resize(written);
  if (!text.empty() && text.back() != '.') text += '.';
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

// The file without its leading comment lines (what the solution is and where it came from: the
// approach goes to the summary instead).
std::string without_header_comment(const std::string& code) {
  std::size_t pos = 0;
  while (pos < code.size() && code.compare(pos, 2, "//") == 0) {
    const auto end = code.find('\n', pos);
    if (end == std::string::npos) return "";
    pos = end + 1;
  }
  return code.substr(pos);
}

json settings(const SftConfig& c, const std::vector<SftPair>& pairs) {
  json tasks = json::array();
  for (const auto& p : pairs) tasks.push_back(p.task_id);
  return {{"model", c.model.string()},
          {"tokenizer", c.tokenizer.string()},
          {"solutions", c.solutions.string()},
          {"refinement", c.refinement.string()},
          {"refinement_max_turn", c.refinement_max_turn},
          {"format", std::string(common::to_string(c.tasks.format))},
          {"split", c.tasks.split},
          {"task_size", c.tasks.task_size},
          {"tasks", tasks},
          {"steps", c.n_steps},
          {"batch", c.batch},
          {"lr", c.lr},
          {"weight_decay", c.weight_decay},
          {"max_grad_norm", c.max_grad_norm},
          {"seed", c.seed},
          {"commit", common::project_commit()}};
}

}  // namespace

fs::path solution_path(const fs::path& solutions_dir, const std::string& task_id, common::Format format) {
  switch (format) {
    case common::Format::HOST:
      return solutions_dir / (task_id + ".host.cpp");
    case common::Format::KERNELBENCH:
      return solutions_dir / (task_id + ".kernelbench.py");
    default:
      return solutions_dir / (task_id + ".native.cu");
  }
}

std::string solution_answer(const rollout::PromptTemplates& templates, const std::string& code) {
  const std::string body = without_header_comment(code);
  return "```" + templates.language + "\n" + body + (body.ends_with('\n') ? "" : "\n") + "```\n" + approach_of(code);
}

common::Expected<std::vector<SftPair>> make_sft_pairs(const rollout::RolloutConfig& config, const fs::path& solutions_dir,
                                                      int* n_missing) {
  auto tasks = task::select_tasks(config.tasks, config.split, config.task_size);
  if (!tasks) return tasks.error();
  auto templates = rollout::load_templates(config.templates_dir, config.format, config.example_file);
  if (!templates) return templates.error();
  std::vector<SftPair> pairs;
  int missing = 0;
  for (const auto& task : *tasks) {
    if (task.split && *task.split == "test") {
      return make_error(task.path.string() + ": a held-out (test split) task: the warm start trains on train-split "
                        "tasks only (--split train)");
    }
    const fs::path solution = solution_path(solutions_dir, task.id, config.format);
    if (!fs::exists(solution)) {
      ++missing;
      continue;
    }
    auto code = common::read_file(solution, 1u << 20);
    if (!code) return code.error();
    auto prompt = rollout::build_prompt(*templates, task.source, {}, config.prompt);
    pairs.push_back({task.id, std::move(prompt.messages), solution_answer(*templates, *code)});
  }
  if (n_missing) *n_missing = missing;
  if (pairs.empty()) {
    return make_error("no task of the " + config.split + " split has a solution in " + solutions_dir.string() +
                      " (expected files such as " + solution_path(solutions_dir, "001_abs", config.format).filename().string() +
                      ")");
  }
  return pairs;
}

common::Expected<SftSummary> run_sft(const SftConfig& config) {
  if (config.n_steps < 1) return make_error("steps: must be at least 1, got " + std::to_string(config.n_steps));
  if (config.batch < 1) return make_error("batch: must be at least 1, got " + std::to_string(config.batch));
  if (!(config.lr > 0)) return make_error("lr: must be positive, got " + std::to_string(config.lr));
  if (config.out_dir.empty()) return make_error("out: a folder for the warm start's checkpoint and log is needed");
  const fs::path checkpoint = config.out_dir / "checkpoint";
  if (fs::exists(checkpoint)) {
    return make_error(checkpoint.string() + ": a finished warm start is here; give another --out (it is not overwritten)");
  }
  SftSummary summary;
  auto pairs = make_sft_pairs(config.tasks, config.solutions, &summary.n_missing);
  if (!pairs) return pairs.error();
  if (!config.refinement.empty()) {
    auto refinement = make_refinement_pairs(config.tasks, config.solutions, config.refinement, config.refinement_max_turn);
    if (!refinement) return refinement.error();
    pairs->insert(pairs->end(), refinement->begin(), refinement->end());
  }

  const fs::path tokenizer = config.tokenizer.empty() ? config.model : config.tokenizer;
  auto policy = policy::load_policy_model(config.model, tokenizer, config.device);
  if (!policy) return policy.error();
  policy->model->set_activation_checkpointing(config.activation_checkpointing);
  auto end_of_turn = policy->chat.end_of_turn_id(policy->tokenizer);
  if (!end_of_turn) return end_of_turn.error();

  // Tokenised once; pairs longer than the model's context are left out (counted).
  const auto context = static_cast<std::size_t>(policy->model->config().max_position);
  std::vector<TrainingSample> samples;
  std::vector<SftPair> kept;
  std::int64_t longest = 0;
  for (auto& p : *pairs) {
    TrainingSample s;
    s.prompt = policy->prompt_ids(p.prompt);
    for (auto id : policy->tokenizer.encode(p.answer, /*allow_special=*/false)) s.response.push_back(id);
    s.response.push_back(*end_of_turn);
    s.advantage = 1.0;
    if (s.prompt.size() + s.response.size() > context) {
      ++summary.n_too_long;
      continue;
    }
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(s.response.size()));
    samples.push_back(std::move(s));
    kept.push_back(std::move(p));
  }
  if (samples.empty()) {
    return make_error("every pair is longer than the model's context of " + std::to_string(context) + " tokens");
  }
  summary.n_pairs = static_cast<int>(samples.size());
  for (const auto& p : kept) summary.n_refinement_pairs += p.turn > 1 ? 1 : 0;

  std::error_code ec;
  fs::create_directories(config.out_dir, ec);
  if (ec) return make_error(config.out_dir.string() + ": cannot create: " + ec.message());
  {
    std::ofstream out(config.out_dir / "pairs.jsonl");
    for (const auto& p : kept) {
      json prompt = json::array();
      for (const auto& m : p.prompt) prompt.push_back({{"role", m.role}, {"content", m.content}});
      out << json{{"task", p.task_id}, {"turn", p.turn}, {"prompt", prompt}, {"answer", p.answer}}.dump() << "\n";
    }
    std::ofstream(config.out_dir / "sft.json") << settings(config, kept).dump(1) << "\n";
    if (!out) return make_error((config.out_dir / "pairs.jsonl").string() + ": cannot write");
  }

  UpdateConfig update;
  update.temperature = 1.0;
  update.n_minibatches = 1;
  update.n_batch_samples = config.batch;
  update.grpo.max_response_tokens = longest;
  update.max_grad_norm = config.max_grad_norm;
  update.micro_batch_tokens = config.micro_batch_tokens;
  update.skip_zero_advantage = false;
  UpdateModels models{policy->model, nullptr, policy->bf16_autocast};
  torch::optim::AdamW optimizer(policy->model->parameters(),
                                torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay));

  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(config.seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::size_t next = 0;
  std::ofstream log(config.out_dir / "sft_log.jsonl");
  for (int step = 1; step <= config.n_steps; ++step) {
    std::vector<TrainingSample> batch;
    for (int k = 0; k < config.batch; ++k) {
      if (next == order.size()) {  // every pair seen: a new order
        std::shuffle(order.begin(), order.end(), rng);
        next = 0;
      }
      batch.push_back(samples[order[next++]]);
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto stats = update_policy(models, optimizer, std::move(batch), update, config.seed + static_cast<std::uint64_t>(step));
    if (!stats) return make_error("step " + std::to_string(step) + ": " + stats.error().message);
    const double seconds = common::seconds_since(t0);
    if (step == 1) summary.first_nll = stats->response_nll;
    summary.last_nll = stats->response_nll;
    summary.steps_run = step;
    log << json{{"step", step}, {"nll", stats->response_nll}, {"grad_norm", stats->grad_norm},
                {"tokens", stats->n_tokens}, {"seconds", seconds}}.dump()
        << "\n"
        << std::flush;
    if (step == 1 || step % 10 == 0 || step == config.n_steps) {
      std::fprintf(stderr, "sft step %d/%d: nll %.4f per answer token, grad norm %.3f, %.2f s\n", step, config.n_steps,
                   stats->response_nll, stats->grad_norm, seconds);
    }
  }
  if (!log) return make_error((config.out_dir / "sft_log.jsonl").string() + ": cannot write");
  if (auto s = weights::save_hf_checkpoint(checkpoint, policy->model->config(), policy->model->state(), "float32"); !s) {
    return s.error();
  }
  summary.checkpoint = checkpoint;
  return summary;
}

}  // namespace kernelrl::train
