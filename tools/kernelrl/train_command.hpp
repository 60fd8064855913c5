// `kernelrl train`: the options of the GRPO trainer (src/train) and the command itself.
#pragma once

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

#include "credit_options.hpp"
#include "eval/engine.hpp"
#include "rollout/evaluator.hpp"
#include "train/trainer.hpp"

namespace kernelrl::cli {

struct TrainArgs {
  train::TrainConfig config;
  std::string format = "native";
  CreditArgs credit;
  bool no_checkpointing = false;
  int n_ranks = 1;  // --ranks: data-parallel CPU ranks (processes, summing over gloo)
  int n_gpus = 0;   // --gpus: one rank per GPU, rank i on GPU i (0: not given)
  int rank_timeout_s = 3600;  // how long a rank waits for the others (rendezvous, each exchange)
  std::vector<std::string> self_command;  // how this process was started: each rank runs it again
};

// Registers `train` and its options on `app`; returns the subcommand.
CLI::App* add_train_command(CLI::App& app, TrainArgs& args);

// Runs the training; `make_evaluator` starts the kernel evaluator, the in-process engine or the
// service (only for the kernel reward). With --ranks/--gpus N > 1 it starts N ranks (this command
// again, train/launcher.hpp) and waits for them; a process started that way is one rank. Returns
// the CLI's exit code (0 trained, 2 could not or a rank failed, 64 usage).
int run_train(TrainArgs& args,
              const std::function<common::Expected<std::unique_ptr<rollout::Evaluator>>()>& make_evaluator);

struct ConvertArgs {
  std::filesystem::path model;  // .gguf or Hugging Face folder
  std::filesystem::path out;    // Hugging Face folder to write
  std::string dtype = "float32";
};

// Registers `convert` (a checkpoint to a Hugging Face folder that transformers loads).
CLI::App* add_convert_command(CLI::App& app, ConvertArgs& args);
int run_convert(const ConvertArgs& args);

}  // namespace kernelrl::cli
