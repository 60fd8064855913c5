// kernelrl: the command-line entry point. Parses arguments and wires the subsystems together;
// all behaviour lives in the libraries under src/.
//
// Exit codes: 0 evaluated (whatever the candidate's status), 2 could not evaluate (bad task, missing
// file, no device; `report`: unreadable trajectories or Chart.js file; `rollout`: a failure that
// stopped the run, or no HTTP policy in this build), 64 usage error. `eval --batch --check-expect` exits 1 when a status differs
// from the entry's "expect"; `tasks check` exits 1 when a task fails its checks; `doctor` exits 2 when
// the engine cannot start; `audit` exits 2 when the solution set, the tasks or the engine cannot be used.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "eval/worker.hpp"
#include "rollout/env_protocol.hpp"
#include "audit_command.hpp"
#include "doctor_command.hpp"
#include "engine_options.hpp"
#include "eval_command.hpp"
#include "report_command.hpp"
#include "rollout_command.hpp"
#include "service_command.hpp"
#include "sft_command.hpp"
#include "tasks_command.hpp"
#include "train_command.hpp"

namespace {

using namespace kernelrl;

// `kernelrl worker` without --redis is the engine's internal per-device worker (pipes, JSON lines);
// with --redis it is the evaluation service's worker (service_command.hpp).
bool is_internal_worker(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "worker") return false;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--redis", 0) == 0) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (is_internal_worker(argc, argv)) {
    int in_fd = -1, out_fd = -1;
    eval::WorkerSettings settings;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--in") in_fd = std::atoi(argv[i + 1]);
      if (flag == "--out") out_fd = std::atoi(argv[i + 1]);
      if (flag == "--device-lock") settings.device_lock_dir = argv[i + 1];
      if (flag == "--cuda-connections") settings.cuda_max_connections = static_cast<unsigned>(std::atoi(argv[i + 1]));
      if (flag == "--warm-children") settings.warm_children = static_cast<unsigned>(std::atoi(argv[i + 1]));
      if (flag == "--gpu") settings.gpu = argv[i + 1];
      if (flag == "--scratch-in") settings.scratch_in = argv[i + 1];
    }
    if (in_fd < 0 || out_fd < 0) {
      std::cerr << "kernelrl worker: without --redis, an internal command of the engine; needs --in FD --out FD "
                   "[--device-lock DIR] [--scratch-in DIR] [--cuda-connections N] [--warm-children N] [--gpu ID]. The evaluation service's worker is "
                   "`kernelrl worker --redis URL [--gpus all|0,1,...]`\n";
      return 64;
    }
    return eval::worker_main(in_fd, out_fd, settings);
  }

  CLI::App app{"kernelrl: evaluate and train language models that write fast CUDA kernels"};
  app.require_subcommand(1);
  eval::EngineConfig config;
  cli::EvalArgs a;

  auto* eval_cmd = cli::add_eval_command(app, a);
  cli::add_size_option(eval_cmd, a.size);
  cli::add_compile_options(eval_cmd, a);
  cli::add_engine_options(eval_cmd, config);

  cli::TasksArgs tasks_args;
  auto* tasks_cmd = cli::add_tasks_command(app, tasks_args);
  for (auto* sub : {tasks_cmd->get_subcommand("show"), tasks_cmd->get_subcommand("check")}) {
    cli::add_size_option(sub, a.size);
    cli::add_engine_options(sub, config);
  }

  cli::AuditArgs audit_args;
  auto* audit_cmd = cli::add_audit_command(app, audit_args);
  cli::add_compile_options(audit_cmd, a);
  cli::add_engine_options(audit_cmd, config);

  cli::ReportArgs report_args;
  auto* report_cmd = cli::add_report_command(app, report_args);

  cli::EvalServiceArgs eval_service;
  cli::RolloutArgs rollout_args;
  auto* rollout_cmd = cli::add_rollout_command(app, rollout_args);
  cli::add_size_option(rollout_cmd, rollout_args.config.task_size);
  cli::add_compile_options(rollout_cmd, a);
  cli::add_engine_options(rollout_cmd, config);
  cli::add_eval_service_options(rollout_cmd, eval_service);

  cli::TrainArgs train_args;
  auto* train_cmd = cli::add_train_command(app, train_args);
  cli::add_size_option(train_cmd, train_args.config.rollout.task_size);
  cli::add_compile_options(train_cmd, a);
  cli::add_engine_options(train_cmd, config);
  cli::add_eval_service_options(train_cmd, eval_service);

  cli::ServeArgs serve_args;
  auto* serve_cmd = cli::add_serve_command(app, serve_args);
  cli::WorkerArgs worker_args;
  auto* worker_cmd = cli::add_worker_command(app, worker_args);
  cli::add_compile_options(worker_cmd, a);
  cli::add_engine_options(worker_cmd, config);
  cli::SftArgs sft_args;
  auto* sft_cmd = cli::add_sft_command(app, sft_args);
  cli::add_size_option(sft_cmd, sft_args.config.tasks.task_size);
  cli::ConvertArgs convert_args;
  auto* convert_cmd = cli::add_convert_command(app, convert_args);
  cli::DoctorArgs doctor_args;
  auto* doctor_cmd = cli::add_doctor_command(app, doctor_args);
  auto* env_cmd = app.add_subcommand(
      "env", "the rollout's prompts, parsing, feedback, scores and credit as JSON lines on stdin/stdout, for "
             "environments in other languages (src/rollout/env_protocol.hpp, python/kernelrl_client)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 64;
  }

  if (eval_cmd->parsed()) return cli::run_eval(a, config);
  if (audit_cmd->parsed()) return cli::run_audit(*audit_cmd, audit_args, a, config);
  if (report_cmd->parsed()) return cli::run_report(*report_cmd, report_args);
  if (rollout_cmd->parsed()) return cli::run_rollout(rollout_args, config, a, eval_service);
  if (train_cmd->parsed()) {
    train_args.self_command.assign(argv, argv + argc);
    return cli::run_train(train_args, [&] {
      return cli::make_evaluator(eval_service, cli::resolved_engine_config(config, a),
                                 [&] { return cli::make_engine(config, a); });
    });
  }
  if (serve_cmd->parsed()) return cli::run_serve(serve_args);
  if (worker_cmd->parsed()) {
    return cli::run_worker(worker_args, cli::resolved_engine_config(config, a),
                           std::vector<std::string>(argv, argv + argc));
  }
  if (sft_cmd->parsed()) return cli::run_sft(sft_args);
  if (convert_cmd->parsed()) return cli::run_convert(convert_args);
  if (doctor_cmd->parsed()) return cli::run_doctor(doctor_args, [&] { return cli::make_engine(config, a); });
  if (env_cmd->parsed()) return rollout::run_env_protocol(std::cin, std::cout);
  if (tasks_cmd->parsed()) return cli::run_tasks(*tasks_cmd, tasks_args, config, a);
  return 64;
}
