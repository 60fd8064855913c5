// `kernelrl rollout`: multi-turn rollouts of a policy server (an OpenAI-compatible HTTP endpoint)
// over tasks, evaluated by the engine or the evaluation service; resumable (src/rollout).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "credit_options.hpp"
#include "engine_options.hpp"
#include "eval/engine.hpp"
#include "rollout/rollout_config.hpp"
#include "service_command.hpp"

namespace kernelrl::cli {

struct RolloutArgs {
  rollout::RolloutConfig config;
  std::string format = "native", strategy = "mxn";
  CreditArgs credit;
  // The policy server (policy::ChatClientConfig, which exists only with cpp-httplib).
  std::string base_url = "http://127.0.0.1:8000/v1", model, api_key_env = "OPENAI_API_KEY";
  double temperature = 0.9, top_p = 1.0;
  int max_tokens = 8192;
  bool logprobs = false;
  bool token_ids = false;
};

// Registers `rollout` and its own options on `app`, into `args`; the caller adds the size, compile,
// engine and --eval-service options. Returns the subcommand.
CLI::App* add_rollout_command(CLI::App& app, RolloutArgs& args);

// Runs the rollout with the evaluator `eval_service`, or else `engine_config` and `a`, describe.
// Returns the CLI's exit code: 0 ran, 2 a failure stopped the run (or no HTTP policy in this build),
// 64 usage.
int run_rollout(RolloutArgs r, const eval::EngineConfig& engine_config, const EvalArgs& a,
                const EvalServiceArgs& eval_service);

}  // namespace kernelrl::cli
