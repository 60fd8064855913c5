#include "sft_command.hpp"

#include <iostream>

#include "engine_options.hpp"
#include "kernelrl/build_config.hpp"

namespace kernelrl::cli {

CLI::App* add_sft_command(CLI::App& app, SftArgs& args) {
  auto* cmd = app.add_subcommand("sft", "supervised warm start on (prompt, correct kernel) pairs of train-split tasks");
  auto& c = args.config;
  const std::filesystem::path source = build::source_dir;
  c.model = source / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  c.tasks.tasks = {source / "tasks/starter"};
  c.tasks.split = "train";
  c.solutions = source / "tasks/fixtures/starter";
  c.tasks.prompt.max_chars = 0;  // the model's context decides (pairs over it are left out, counted)
  cmd->add_option("--model", c.model, "starting policy: a .gguf file or a Hugging Face folder")->capture_default_str();
  cmd->add_option("--tokenizer", c.tokenizer, "tokenizer and chat template source (default: the model)");
  cmd->add_option("--policy-device", c.device, "where the policy model runs")
      ->check(CLI::IsMember({"auto", "cuda", "cpu"}))->capture_default_str();
  cmd->add_option("--tasks", c.tasks.tasks, "task files or folders")->default_str(quoted_paths(c.tasks.tasks));
  cmd->add_option("--split", c.tasks.split, "tasks of this manifest split (held-out tasks are refused)")
      ->check(CLI::IsMember({"train", "all"}))->capture_default_str();
  cmd->add_option("--solutions", c.solutions, "folder of correct solutions: <task>.native.cu, .host.cpp or .kernelbench.py")
      ->capture_default_str();
  cmd->add_option("--refinement", c.refinement,
                  "a rollout's trajectories.jsonl (or its folder): also train on refinement pairs, the rollout's prompt "
                  "for turn t+1 after each real failed attempt at turn t, answered with the task's solution");
  cmd->add_option("--refinement-max-turn", c.refinement_max_turn, "the latest turn a refinement pair's prompt is for")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  cmd->add_option("--format", args.format, "candidate format of the solutions and prompts")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}))->capture_default_str();
  cmd->add_option("--out", c.out_dir, "folder for the log, the pairs and the trained checkpoint (checkpoint/)")->required();
  cmd->add_option("--steps", c.n_steps, "optimiser steps")->capture_default_str();
  cmd->add_option("--batch", c.batch, "pairs per step")->capture_default_str();
  cmd->add_option("--lr", c.lr, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", c.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--max-grad-norm", c.max_grad_norm, "gradient-norm clip")->capture_default_str();
  cmd->add_option("--micro-batch-tokens", c.micro_batch_tokens, "tokens per forward/backward at most")->capture_default_str();
  cmd->add_option("--seed", c.seed, "pair order seed")->capture_default_str();
  cmd->add_flag("--no-activation-checkpointing", args.no_checkpointing, "keep activations instead of recomputing them");
  return cmd;
}

int run_sft(SftArgs& args) {
  auto& c = args.config;
  c.tasks.format = *common::parse_format(args.format);  // the option check allows only valid names
  c.activation_checkpointing = !args.no_checkpointing;
  c.tasks.out_dir = c.out_dir;  // resolve() wants one; nothing is written there by the pairs
  auto resolved = rollout::resolve(c.tasks);
  if (!resolved) {
    std::cerr << "kernelrl sft: " << resolved.error().message << "\n";
    return 64;
  }
  c.tasks = *resolved;
  auto summary = train::run_sft(c);
  if (!summary) {
    std::cerr << "kernelrl sft: " << summary.error().message << "\n";
    return 2;
  }
  std::cout << "sft " << c.out_dir.string() << ": " << summary->steps_run << " steps on " << summary->n_pairs << " pairs ("
            << summary->n_refinement_pairs << " of them refinement pairs, "
            << summary->n_missing << " tasks without a solution, " << summary->n_too_long
            << " over the context), nll per answer token " << summary->first_nll << " -> " << summary->last_nll
            << "; checkpoint " << summary->checkpoint.string() << " (kernelrl train --model it --tokenizer "
            << (c.tokenizer.empty() ? c.model : c.tokenizer).string() << ")\n";
  return 0;
}

}  // namespace kernelrl::cli
