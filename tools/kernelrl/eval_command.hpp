// `kernelrl eval`: one candidate against its task, or a batch file of them, through the engine.
#pragma once

#include <CLI/CLI.hpp>

#include "engine_options.hpp"
#include "eval/engine.hpp"

namespace kernelrl::cli {

// Registers `eval` and its own options on `app`, into `args`; the caller adds the size, compile
// and engine options (engine_options.hpp). Returns the subcommand.
CLI::App* add_eval_command(CLI::App& app, EvalArgs& args);

// Evaluates what `a` names with the engine `config` and `a` describe. Returns the CLI's exit
// code: 0 evaluated (whatever the candidates' status), 1 a batch status differed from its "expect"
// (with --check-expect), 2 could not evaluate, 64 usage.
int run_eval(const EvalArgs& a, const eval::EngineConfig& config);

}  // namespace kernelrl::cli
