// `kernelrl sft`: the supervised warm start (src/train/sft.hpp) before RL.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "train/sft.hpp"

namespace kernelrl::cli {

struct SftArgs {
  train::SftConfig config;
  std::string format = "native";
  bool no_checkpointing = false;
};

// Registers `sft` and its options on `app`; returns the subcommand.
CLI::App* add_sft_command(CLI::App& app, SftArgs& args);

// Runs the warm start. Returns the CLI's exit code (0 trained, 2 could not, 64 usage).
int run_sft(SftArgs& args);

}  // namespace kernelrl::cli
