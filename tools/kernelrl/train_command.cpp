#include "train_command.hpp"

#include <iostream>

#include "common/crash_report.hpp"
#include "engine_options.hpp"
#include "kernelrl/build_config.hpp"
#include "rollout/runner.hpp"
#include "train/launcher.hpp"
#include "weights/checkpoint.hpp"
#if KERNELRL_HAVE_DATA_PARALLEL
#include <torch/cuda.h>

#include "train/data_parallel.hpp"
#endif

namespace kernelrl::cli {

CLI::App* add_train_command(CLI::App& app, TrainArgs& args) {
  auto* cmd = app.add_subcommand("train", "multi-turn GRPO training of a policy model on kernel tasks (resumable)");
  auto& c = args.config;
  c.model = std::filesystem::path(build::source_dir) / ".cache/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  c.rollout.tasks = {std::filesystem::path(build::source_dir) / "tasks"};
  c.rollout.split = "train";
  c.rollout.prompt.max_chars = 0;  // the prompt is bounded in the policy's tokens instead
  cmd->add_option("--model", c.model, "starting policy: a .gguf file or a Hugging Face folder")->capture_default_str();
  cmd->add_option("--tokenizer", c.tokenizer, "tokenizer and chat template source (default: the model)");
  cmd->add_option("--policy-device", c.device, "where the policy model runs")->check(CLI::IsMember({"auto", "cuda", "cpu"}))->capture_default_str();
  cmd->add_option("--tasks", c.rollout.tasks, "task files or folders")->default_str(quoted_paths(c.rollout.tasks));
  cmd->add_option("--split", c.rollout.split, "tasks of this manifest split")
      ->check(CLI::IsMember({"train", "test", "all"}))->capture_default_str();
  cmd->add_option("--out", c.run_dir, "run directory (an existing one is resumed)")->required();
  cmd->add_option("--steps", c.n_steps, "training steps (batches)")->capture_default_str();
  cmd->add_option("--tasks-per-step", c.tasks_per_step, "tasks per batch")->capture_default_str();
  cmd->add_option("--trajectories", c.rollout.n_trajectories, "m: trajectories per task")->capture_default_str();
  cmd->add_option("--turns", c.rollout.n_turns, "n: turns per trajectory")->capture_default_str();
  cmd->add_option("--format", args.format, "candidate format the model writes")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}))->capture_default_str();
  cmd->add_option("--reward", c.reward, "kernel (the engine's score) or format (docs/train.md: a simpler stand-in)")
      ->check(CLI::IsMember({"kernel", "format"}))->capture_default_str();
  add_credit_options(cmd, c.rollout, args.credit);
  cmd->add_option("--lr", c.lr, "AdamW learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", c.weight_decay, "AdamW weight decay")->capture_default_str();
  cmd->add_option("--temperature", c.policy.sampling.temperature, "sampling temperature")->capture_default_str();
  cmd->add_option("--top-p", c.policy.sampling.top_p, "nucleus sampling mass")->capture_default_str();
  cmd->add_option("--max-new-tokens", c.policy.sampling.max_new_tokens, "tokens per response at most")->capture_default_str();
  cmd->add_option("--prompt-tokens", c.rollout.prompt.max_tokens,
                  "prompt budget in the policy's tokens; older attempts are dropped first (0: the model's context "
                  "less --max-new-tokens, also the most it may be)")
      ->capture_default_str();
  cmd->add_option("--eps-low", c.update.grpo.eps_low, "lower clip of the importance ratio")->capture_default_str();
  cmd->add_option("--eps-high", c.update.grpo.eps_high, "upper clip of the importance ratio")->capture_default_str();
  cmd->add_option("--tis-cap", c.update.grpo.tis_cap,
                  "truncated importance sampling: each token's policy-gradient term is weighted by min(p_old / "
                  "p_sampler, CAP), correcting for the sampler's decode path differing from the trainer's forward "
                  "(0: off)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--kl-coef", c.update.grpo.kl_coef, "k3 KL penalty to a frozen copy of --model (a positive value loads that second copy)")->capture_default_str();
  c.update.grpo.max_response_tokens = 0;
  cmd->add_option("--loss-length", c.update.grpo.max_response_tokens,
                  "Dr. GRPO constant length L in tokens; each step's loss is divided by its share of the batch "
                  "(tasks per step x m x n) times L (default: --max-new-tokens)");
  cmd->add_option("--minibatches", c.update.n_minibatches, "optimiser steps per batch")->capture_default_str();
  cmd->add_option("--max-grad-norm", c.update.max_grad_norm, "gradient-norm clip")->capture_default_str();
  cmd->add_option("--micro-batch-tokens", c.update.micro_batch_tokens, "tokens per forward/backward at most")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "task order, sampling and minibatch seed")->capture_default_str();
  cmd->add_flag("--no-activation-checkpointing", args.no_checkpointing, "keep activations instead of recomputing them");
  auto* ranks = cmd->add_option("--ranks", args.n_ranks,
                                "data-parallel ranks on this machine's CPU: N processes, each rolling out and training "
                                "on its share of every step's tasks, gradients summed over gloo (docs/train.md)")
                    ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--gpus", args.n_gpus, "data parallel over GPUs: one rank per GPU, rank i on GPU i (needs the NCCL "
                                         "backend, not built yet)")
      ->check(CLI::PositiveNumber)->excludes(ranks);
  cmd->add_option("--rank-timeout-s", args.rank_timeout_s,
                  "how long a rank waits for the others: the rendezvous and each exchange (a rank that fails stops "
                  "the run at once; this bounds a rank that hangs)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  auto& h = c.heldout;
  cmd->add_option("--heldout-split", h.split,
                  "also evaluate the policy on this split of --tasks (test: the held-out ops) before the first "
                  "step, every --heldout-every steps and after the last; with --steps 0 only that")
      ->check(CLI::IsMember({"test", "train", "all"}));
  cmd->add_option("--heldout-far", h.far_tasks,
                  "far held-out tasks (files or folders, any split: operators unlike the trained ones), evaluated "
                  "with --heldout-split's and reported apart (heldout_far/... in the log, RUN/heldout-far/)");
  cmd->add_option("--heldout-every", h.every, "steps between held-out evaluations (0: first and last only)")
      ->capture_default_str();
  cmd->add_option("--heldout-trajectories", h.n_trajectories, "held-out m: trajectories per task")->capture_default_str();
  cmd->add_option("--heldout-turns", h.n_turns, "held-out n: turns per trajectory")->capture_default_str();
  cmd->add_option("--heldout-seed", h.seed, "the held-out sampling seed (the same at every evaluation)")
      ->capture_default_str();
  return cmd;
}

namespace {

// Starts n_ranks ranks (this command again) and waits for them. Checks first what this build and
// machine lack, so that --gpus on a machine without them fails here, naming why, not in every rank.
int launch_train_ranks(const TrainArgs& args, int n_ranks) {
#if !KERNELRL_HAVE_DATA_PARALLEL
  std::cerr << "kernelrl train: --" << (args.n_gpus > 0 ? "gpus " : "ranks ") << n_ranks
            << ": data-parallel training is not in this build: it needs c10d's ProcessGroupGloo.hpp and gloo's headers "
               "(Debian: libtorch-dev and libgloo-dev; pip's torch ships neither), found at configure time "
               "(src/train/CMakeLists.txt, KERNELRL_DATA_PARALLEL)\n";
  return 2;
#else
  const bool gpus = args.n_gpus > 0;
  if (gpus) {
    const auto n_devices = static_cast<int>(torch::cuda::device_count());
    if (n_devices < n_ranks) {
      std::cerr << "kernelrl train: --gpus " << n_ranks << ": this machine has " << n_devices
                << " CUDA device(s); use --ranks N for CPU ranks\n";
      return 2;
    }
    if (auto s = train::check_backend(train::Backend::NCCL); !s) {
      std::cerr << "kernelrl train: --gpus " << n_ranks << ": " << s.error().message << "\n";
      return 2;
    }
  }
  train::LaunchConfig launch;
  launch.command = args.self_command;
  launch.command.at(0) = std::filesystem::read_symlink("/proc/self/exe").string();  // this very binary
  launch.n_ranks = n_ranks;
  launch.pin_gpus = gpus;
  if (auto s = train::launch_ranks(launch); !s) {
    std::cerr << "kernelrl train: " << s.error().message << "\n";
    return 2;
  }
  return 0;
#endif
}

// Trains in this process: the whole run, or one rank's part of it (joining the other ranks first).
common::Expected<train::TrainSummary> train_here(const TrainArgs& args, const std::optional<train::RankEnvironment>& rank,
                                                 rollout::Evaluator* evaluator) {
  if (!rank || rank->info.world_size == 1) return train::run_training(args.config, evaluator);
#if !KERNELRL_HAVE_DATA_PARALLEL
  (void)args;
  return common::make_error("rank " + std::to_string(rank->info.rank) +
                            ": data-parallel training is not in this build (no gloo headers at configure time)");
#else
  train::GradientAllReduce group;
  const auto backend = args.n_gpus > 0 ? train::Backend::NCCL : train::Backend::GLOO;
  if (auto s = group.connect(rank->info, rank->host, rank->port, std::chrono::seconds(args.rank_timeout_s), backend); !s) {
    return s.error();
  }
  return train::run_training(args.config, evaluator, nullptr, &group);
#endif
}

}  // namespace

int run_train(TrainArgs& args,
              const std::function<common::Expected<std::unique_ptr<rollout::Evaluator>>()>& make_evaluator) {
  common::install_crash_report();  // a crash in a long run on a remote machine says where
  auto& c = args.config;
  c.rollout.format = *common::parse_format(args.format);  // the option checks allow only valid names
  apply_credit_options(args.credit, c.rollout);
  c.activation_checkpointing = !args.no_checkpointing;
  if (c.update.grpo.max_response_tokens <= 0) c.update.grpo.max_response_tokens = c.policy.sampling.max_new_tokens;
  c.rollout.out_dir = c.run_dir / "steps";  // each step's rollout gets its own folder under it
  auto checked = rollout::resolve(c.rollout);
  if (!checked) {
    std::cerr << "kernelrl train: " << checked.error().message << "\n";
    return 64;
  }
  c.rollout = *checked;
  auto rank = train::rank_from_environment();
  if (!rank) {
    std::cerr << "kernelrl train: " << rank.error().message << "\n";
    return 64;
  }
  const int n_ranks = args.n_gpus > 0 ? args.n_gpus : args.n_ranks;
  if (!*rank && n_ranks > 1) return launch_train_ranks(args, n_ranks);
  std::unique_ptr<rollout::Evaluator> evaluator;
  if (c.reward == "kernel") {
    auto e = make_evaluator();
    if (!e) {
      std::cerr << "kernelrl train: " << e.error().message << "\n";
      return 2;
    }
    evaluator = std::move(*e);
  }
  auto summary = train_here(args, *rank, evaluator.get());
  if (!summary) {
    std::cerr << "kernelrl train: " << summary.error().message << "\n";
    return 2;
  }
  if (*rank && (*rank)->info.rank != 0) return 0;  // rank 0 reports the run
  std::cout << "train " << c.run_dir.string() << ": " << summary->steps_run << " steps run"
            << (summary->steps_done_before ? " after " + std::to_string(summary->steps_done_before) + " done before" : "")
            << ", mean reward " << summary->first_reward << " -> " << summary->last_reward << "\n";
  return 0;
}

CLI::App* add_convert_command(CLI::App& app, ConvertArgs& args) {
  auto* cmd = app.add_subcommand("convert", "write a model checkpoint (.gguf or HF folder) as a Hugging Face folder");
  cmd->add_option("model", args.model, "a .gguf file or a Hugging Face folder")->required();
  cmd->add_option("out", args.out, "the Hugging Face folder to write (config.json, model.safetensors)")->required();
  cmd->add_option("--dtype", args.dtype, "tensor type in the file")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}))->capture_default_str();
  return cmd;
}

int run_convert(const ConvertArgs& args) {
  auto checkpoint = weights::load_checkpoint(args.model);
  if (!checkpoint) {
    std::cerr << "kernelrl convert: " << checkpoint.error().message << "\n";
    return 2;
  }
  if (auto s = weights::save_hf_checkpoint(args.out, checkpoint->config, checkpoint->tensors, args.dtype); !s) {
    std::cerr << "kernelrl convert: " << s.error().message << "\n";
    return 2;
  }
  std::cout << "convert: " << args.model.string() << " -> " << args.out.string() << " (" << checkpoint->tensors.size()
            << " tensors, " << args.dtype << ")\n";
  return 0;
}

}  // namespace kernelrl::cli
