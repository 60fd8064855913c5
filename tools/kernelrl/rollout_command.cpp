#include "rollout_command.hpp"

#include <iostream>

#include "common/progress.hpp"
#include "rollout/runner.hpp"
#include "exit_codes.hpp"
#if KERNELRL_HAVE_HTTP_POLICY
#include "policy/http_policy.hpp"
#endif

namespace kernelrl::cli {

namespace {

[[maybe_unused]] constexpr int kRan = kEvaluated;
constexpr int kCouldNotRun = kCouldNotEvaluate;

}  // namespace

CLI::App* add_rollout_command(CLI::App& app, RolloutArgs& args) {
  auto* cmd = app.add_subcommand("rollout", "multi-turn rollouts of a policy server over tasks (resumable)");
  auto& c = args.config;
  cmd->add_option("--tasks", c.tasks, "task files or folders (searched recursively)")->required();
  cmd->add_option("--split", c.split, "tasks of this manifest split")
      ->check(CLI::IsMember({"train", "test", "all"}))->capture_default_str();
  cmd->add_option("--format", args.format, "candidate format the model writes")
      ->check(CLI::IsMember({"native", "host", "kernelbench"}))->capture_default_str();
  cmd->add_option("--strategy", args.strategy, "mxn (m x n), parallel (m x 1), serial (1 x n) or beam")
      ->check(CLI::IsMember({"mxn", "parallel", "serial", "beam"}))->capture_default_str();
  cmd->add_option("--trajectories", c.n_trajectories, "m: trajectories per task")->capture_default_str();
  cmd->add_option("--turns", c.n_turns, "n: turns per trajectory")->capture_default_str();
  cmd->add_option("--beam-width", c.beam_width, "beam: trajectories kept after each turn (divides m)")->capture_default_str();
  cmd->add_option("--concurrency", c.concurrency, "trajectories generating or evaluating at once")->capture_default_str();
  cmd->add_option("--max-policy-failures", c.max_policy_failures,
                  "consecutive turns without a policy response (after retries) that stop the run")
      ->capture_default_str();
  add_credit_options(cmd, c, args.credit);
  cmd->add_option("--prompts", c.templates_dir, "prompt templates folder (default: the source tree's prompts/)");
  cmd->add_option("--example", c.example_file, "one-shot example answer (default: examples/vector_add/ for the format)");
  cmd->add_option("--gpu-name", c.prompt.gpu, "GPU named in the native and kernelbench prompts")->capture_default_str();
  cmd->add_option("--prompt-chars", c.prompt.max_chars, "prompt budget; older attempts are dropped first")
      ->capture_default_str();
  cmd->add_option("--out", c.out_dir, "run directory (an existing one is resumed)")->required();
  cmd->add_option("--base-url", args.base_url, "OpenAI-compatible server")->capture_default_str();
  cmd->add_option("--model", args.model, "the server's model name");
  cmd->add_option("--temperature", args.temperature, "sampling temperature")->capture_default_str();
  cmd->add_option("--top-p", args.top_p, "nucleus sampling mass")->capture_default_str();
  cmd->add_option("--max-tokens", args.max_tokens, "generated tokens per response")->capture_default_str();
  cmd->add_option("--api-key-env", args.api_key_env, "environment variable holding the API key")->capture_default_str();
  cmd->add_flag("--logprobs", args.logprobs, "ask for token log-probabilities (stored with each turn)");
  cmd->add_flag("--token-ids", args.token_ids,
                "with --logprobs: ask for tokens as ids (vLLM's return_tokens_as_token_ids), stored with each turn");
  return cmd;
}

int run_rollout(RolloutArgs r, const eval::EngineConfig& engine_config, const EvalArgs& a,
                const EvalServiceArgs& eval_service) {
#if KERNELRL_HAVE_HTTP_POLICY
  r.config.format = *common::parse_format(r.format);  // the option checks allow only valid names
  r.config.strategy = *rollout::parse_strategy(r.strategy);
  apply_credit_options(r.credit, r.config);
  if (auto checked = rollout::resolve(r.config); !checked) {  // before the engine takes seconds to start
    std::cerr << "kernelrl rollout: " << checked.error().message << "\n";
    return kUsageError;
  }
  r.config.show_progress = common::stderr_is_tty();
  policy::ChatClientConfig chat;
  chat.base_url = r.base_url;
  chat.model = r.model;
  chat.api_key_env = r.api_key_env;
  chat.temperature = r.temperature;
  chat.top_p = r.top_p;
  chat.max_tokens = r.max_tokens;
  chat.logprobs = r.logprobs;
  chat.token_ids = r.token_ids;
  chat.max_in_flight = r.config.concurrency;
  auto policy = policy::HttpPolicy::create(chat);
  if (!policy) {
    std::cerr << "kernelrl rollout: " << policy.error().message << "\n";
    return kCouldNotRun;
  }
  auto evaluator = make_evaluator(eval_service, resolved_engine_config(engine_config, a),
                                  [&] { return make_engine(engine_config, a); });
  if (!evaluator) {
    std::cerr << "kernelrl rollout: " << evaluator.error().message << "\n";
    return kCouldNotRun;
  }
  auto summary = rollout::RolloutRunner(r.config, **policy, **evaluator).run();
  if (!summary) {
    std::cerr << "kernelrl rollout: " << summary.error().message << "\n";
    return kCouldNotRun;
  }
  std::cout << "rollout " << r.config.out_dir.string() << (summary->resumed ? " (resumed)" : "") << ": "
            << summary->n_tasks << " tasks, " << summary->n_turns_run << " turns run (" << summary->n_correct_run
            << " correct, " << summary->n_parse_errors_run << " unparsable, " << summary->n_policy_errors_run
            << " without response), " << summary->n_turns_found
            << " found from before, " << summary->n_turns_total << " in all\n";
  return kRan;
#else
  (void)r, (void)engine_config, (void)a, (void)eval_service;
  std::cerr << "kernelrl rollout: this build has no HTTP policy client; HTTP policies need libcpp-httplib "
               "(install libcpp-httplib-dev and reconfigure)\n";
  return kCouldNotRun;
#endif
}

}  // namespace kernelrl::cli
